/// When a ``FileSink`` forces its lines to the disk with `fsync`.
public enum FileSinkDurability: String, Sendable, Hashable, Codable, CaseIterable {
    /// Never: lines sit in the operating system's buffers (lost if the machine crashes, not if
    /// the process does).
    case none
    /// Group commit: at most one `fsync` every ``FileSink/syncEvery``, and one when
    /// the sink stops. The default.
    case batch
    /// One `fsync` per line, before the event counts as delivered.
    case always
}
