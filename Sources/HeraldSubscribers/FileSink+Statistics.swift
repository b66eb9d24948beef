import HeraldSync

extension FileSink {
    /// A copy of the sink's ``Statistics`` behind a lock of its own: the sink's state lock is
    /// held across writes and fsyncs on its I/O thread, and a reader (a metrics scrape) must
    /// never wait for the disk.
    final class StatisticsMirror: Sendable {
        let copy = SyncLock(Statistics())
    }

    /// Counters of a ``FileSink`` since it was created.
    public struct Statistics: Sendable, Hashable {
        /// Lines written.
        public var lines = 0
        /// Bytes written (newlines included).
        public var bytes = 0
        /// Successful `fsync` calls on the archive.
        public var syncs = 0
        /// Rotations done.
        public var rotations = 0
        /// Torn last lines repaired at open.
        public var tornLines = 0
        /// Failed opens, writes, rotations and syncs.
        public var failures = 0
        /// The last failure.
        public var lastError: FileSinkError?

        /// Zero counters.
        public init() {}
    }
}
