import Herald

/// Published on `sink.<name>.torn` when a ``FileSink`` opens its file and finds a torn last line
/// (a crash in the middle of a write): the bytes after the last newline were moved away and
/// every complete line before them was kept.
public struct FileSinkTornLine: Event, Hashable {
    /// The sink's name.
    public var sink: String
    /// The archive that had the torn line.
    public var path: String
    /// How many bytes were moved.
    public var byteCount: Int
    /// Where they went (appended, followed by a newline): `<path>.torn`.
    public var movedTo: String
    /// The size of the archive after the repair, in bytes.
    public var keptBytes: Int

    /// `sink.<name>.torn`.
    public var topic: Topic { Topic(stringLiteral: "sink.\(sink).torn") }

    /// A report from its parts.
    public init(sink: String, path: String, byteCount: Int, movedTo: String, keptBytes: Int) {
        self.sink = sink
        self.path = path
        self.byteCount = byteCount
        self.movedTo = movedTo
        self.keptBytes = keptBytes
    }
}
