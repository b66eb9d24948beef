import Dispatch
import HeraldSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One dispatch signal source per signal for the life of the process, shared by every
/// ``UnixSignalsSequence``.
///
/// Sources are never cancelled: libdispatch on Linux does not deliver a signal to a source made
/// after an earlier source for that signal was cancelled (seen here: the second sequence never
/// heard it). Sequences come and go as subscribers instead.
final class SignalHub: Sendable {
    static let shared = SignalHub()

    private struct Source {
        var registered: Bool
        var waiters: [CheckedContinuation<Void, Never>]
        // Kept so that it lives as long as the process.
        var source: any DispatchSourceSignal
    }

    private struct Subscriber {
        var signals: Set<Int32>
        var continuation: AsyncStream<UnixSignal>.Continuation
    }

    private struct State {
        var sources: [Int32: Source] = [:]
        var subscribers: [UInt64: Subscriber] = [:]
        var nextID: UInt64 = 0
    }

    private let state = SyncLock(State())
    private let queue = DispatchQueue(label: "herald.unix-signals")

    /// Hands `signals` to `continuation` from now on; returns once each has a registered source.
    func subscribe(_ signals: [UnixSignal], _ continuation: AsyncStream<UnixSignal>.Continuation) async -> UInt64 {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.subscribers[state.nextID] = Subscriber(signals: Set(signals.map(\.rawValue)), continuation: continuation)
            return state.nextID
        }
        for signal in signals { await register(signal) }
        return id
    }

    /// Stops handing signals to the subscriber `id`.
    func unsubscribe(_ id: UInt64) {
        state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
    }

    private func register(_ unixSignal: UnixSignal) async {
        let number = unixSignal.rawValue
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if var source = state.sources[number] {
                    if source.registered { return true }
                    source.waiters.append(continuation)
                    state.sources[number] = source
                    return false
                }
                // Ignored first, so the default action (ending the process) never runs;
                // dispatch still sees the signal. Handlers run on the queue, never here.
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { [self] in deliver(unixSignal) }
                source.setRegistrationHandler { [self] in registered(number) }
                source.resume()
                state.sources[number] = Source(registered: false, waiters: [continuation], source: source)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func registered(_ number: Int32) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard var source = state.sources[number] else { return [] }
            defer {
                source.registered = true
                source.waiters = []
                state.sources[number] = source
            }
            return source.waiters
        }
        waiters.forEach { $0.resume() }
    }

    private func deliver(_ signal: UnixSignal) {
        let continuations = state.withLock { state in
            state.subscribers.values.filter { $0.signals.contains(signal.rawValue) }.map(\.continuation)
        }
        continuations.forEach { $0.yield(signal) }
    }
}
