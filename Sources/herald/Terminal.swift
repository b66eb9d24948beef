import HeraldSync
import Foundation
import HeraldRuntime
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The only place Herald talks to the terminal.
///
/// Each call writes one line: any control character in it (a line break, an escape sequence
/// from a service's error or a status answer) is escaped (`TerminalText.line`), so the only
/// line breaks on the terminal are the ones written here. Herald's own multi-line texts go
/// through ``outLines(_:)``.
enum Terminal {
    static func out(_ line: String) {
        FileHandle.standardOutput.write(Data((TerminalText.line(line) + "\n").utf8))
    }

    static func err(_ line: String) {
        FileHandle.standardError.write(Data((TerminalText.line(line) + "\n").utf8))
    }

    /// `text`'s lines, each as ``out(_:)`` writes it; for text whose line breaks are Herald's
    /// (help, a status table made of escaped strings).
    static func outLines(_ text: String) {
        text.split(separator: "\n", omittingEmptySubsequences: false).forEach { out(String($0)) }
    }

    /// Calls `handler` once on the first SIGINT or SIGTERM; a second signal exits at once, unless
    /// it follows the first within a second (a wrapper such as `timeout` may send one signal to
    /// both the process and its group: that is one request to stop, not two).
    static func onTermination(_ handler: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
        onTerminationSignal { _ in handler() }
    }

    /// ``onTermination(_:)``, telling the handler which signal came (`SIGINT` or `SIGTERM`).
    ///
    /// The handler runs on a dispatch queue, not in a signal handler, so it may do anything.
    static func onTerminationSignal(_ handler: @escaping @Sendable (Int32) -> Void) -> [any DispatchSourceSignal] {
        let fired = Flag()
        return [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if fired.set() {
                    handler(number)
                } else if fired.secondsSinceSet < 1 {
                    return
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

/// A flag that is set once, remembering when.
final class Flag: Sendable {
    private let storage = SyncLock<ContinuousClock.Instant?>(nil)

    /// Sets the flag; true the first time.
    func set() -> Bool {
        storage.withLock { value in
            defer { if value == nil { value = .now } }
            return value == nil
        }
    }

    /// Seconds since the flag was set (0 when it is not).
    var secondsSinceSet: Double {
        storage.withLock { value in
            guard let value else { return 0 }
            return (ContinuousClock.now - value).timeInterval
        }
    }
}

/// Cancels a task when a signal fires, even if the signal came before the task was attached.
final class CancelOnSignal: Sendable {
    private let state = SyncLock<(fired: Bool, cancel: (@Sendable () -> Void)?)>((false, nil))

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
