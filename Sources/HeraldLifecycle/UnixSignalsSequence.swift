/// The signals a process receives, as an `AsyncSequence`.
///
/// Built on dispatch signal sources: no C handler does work, each signal is handed to a serial
/// queue and from there to the sequence. Creating one sets the signals' disposition to
/// "ignore" (so they no longer end the process) and returns once every source is registered,
/// so a signal sent after `init` returns is never lost. Signals that arrive together may come
/// as one element.
///
/// It hears signals until the last copy of the sequence and its iterator is gone; the signals
/// stay ignored afterwards (the process keeps one source per signal; see `SignalHub`), so a
/// late duplicate (a wrapper that signals the process and its group) cannot kill a process
/// that is finishing. Iterate it from one task at a time.
public struct UnixSignalsSequence: AsyncSequence, Sendable {
    /// Each element is a signal that came.
    public typealias Element = UnixSignal

    private let storage: Storage

    /// Traps `signals` (duplicates count once).
    public init(trapping signals: [UnixSignal]) async {
        storage = await Storage(signals: Array(Set(signals.map(\.rawValue))).sorted().map(UnixSignal.init(rawValue:)))
    }

    /// Traps `signals`.
    public init(trapping signals: UnixSignal...) async {
        await self.init(trapping: signals)
    }

    /// An iterator over the signals from now on (one at a time: see the type's notes).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: storage.stream.makeAsyncIterator(), storage: storage)
    }

    /// Iterates the signals as they come; ends only when the sequence's sources are gone.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var base: AsyncStream<UnixSignal>.AsyncIterator
        // Keeps the sources alive as long as someone iterates.
        private let storage: Storage

        fileprivate init(base: AsyncStream<UnixSignal>.AsyncIterator, storage: Storage) {
            self.base = base
            self.storage = storage
        }

        /// The next signal; nil when the calling task is cancelled.
        public mutating func next() async -> UnixSignal? {
            await base.next()
        }
    }

    /// The stream the process's signal sources feed; unsubscribes when released.
    fileprivate final class Storage: Sendable {
        let stream: AsyncStream<UnixSignal>
        private let continuation: AsyncStream<UnixSignal>.Continuation
        private let subscription: UInt64

        init(signals: [UnixSignal]) async {
            let (stream, continuation) = AsyncStream.makeStream(of: UnixSignal.self)
            self.stream = stream
            self.continuation = continuation
            subscription = await SignalHub.shared.subscribe(signals, continuation)
            if signals.isEmpty { continuation.finish() }
        }

        deinit {
            SignalHub.shared.unsubscribe(subscription)
            continuation.finish()
        }
    }
}
