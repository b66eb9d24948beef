import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The only place Herald talks to the terminal.
enum Terminal {
    static func out(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func err(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// Blocks SIGINT and SIGTERM in the calling thread, and so in every thread it starts later.
    ///
    /// On Linux, Dispatch reads signals through a `signalfd`, which sees a signal only while
    /// it is blocked in every thread: a thread that does not block it (a server or pool thread)
    /// would take it and, with `SIG_IGN`, drop it. Call first thing in `main`, before any
    /// thread exists.
    static func blockTerminationSignals() {
        #if os(Linux)
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGINT)
        sigaddset(&mask, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &mask, nil)
        #endif
    }

    /// Calls `handler` once on the first SIGINT or SIGTERM; a second signal exits at once.
    static func onTermination(_ handler: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
        let fired = Flag()
        return [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if fired.set() {
                    handler()
                } else {
                    Terminal.err("herald: stopping at once")
                    exit(1)
                }
            }
            source.resume()
            return source
        }
    }
}

/// A flag that is set once.
final class Flag: Sendable {
    private let storage = Mutex(false)

    /// Sets the flag; true the first time.
    func set() -> Bool {
        storage.withLock { value in
            defer { value = true }
            return !value
        }
    }
}

/// Cancels a task when a signal fires, even if the signal came before the task was attached.
final class CancelOnSignal: Sendable {
    private let state = Mutex<(fired: Bool, cancel: (@Sendable () -> Void)?)>((false, nil))

    func fire() {
        let cancel = state.withLock { state in
            state.fired = true
            return state.cancel
        }
        cancel?()
    }

    func attach<Success, Failure>(_ task: Task<Success, Failure>) {
        let firedAlready = state.withLock { state in
            state.cancel = { task.cancel() }
            return state.fired
        }
        if firedAlready { task.cancel() }
    }
}
