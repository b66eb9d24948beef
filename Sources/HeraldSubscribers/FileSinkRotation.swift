/// Size-based rotation of a ``FileSink``'s archive.
///
/// Before a line that would take the file past ``maxBytes``, `events.jsonl` is renamed
/// `events.1.jsonl`, an older `events.1.jsonl` becomes `events.2.jsonl`, and so on; the file
/// beyond ``keep`` is deleted. Every step is one atomic `rename`.
public struct FileSinkRotation: Sendable, Hashable, Codable {
    /// The largest size of the live file, in bytes (a single longer line is still written whole).
    public var maxBytes: Int
    /// How many rotated files are kept (`events.1.jsonl` … `events.<keep>.jsonl`).
    public var keep: Int

    /// A rotation policy; `maxBytes` below 1 is taken as 1 and `keep` below 0 as 0.
    public init(maxBytes: Int, keep: Int) {
        self.maxBytes = max(1, maxBytes)
        self.keep = max(0, keep)
    }

    /// The name of the `index`th rotated file: the index goes before the extension
    /// (`var/events.jsonl` → `var/events.2.jsonl`, `var/events` → `var/events.2`).
    public static func rotatedPath(_ path: String, index: Int) -> String {
        let slash = path.lastIndex(of: "/")
        let nameStart = slash.map { path.index(after: $0) } ?? path.startIndex
        guard let dot = path[nameStart...].lastIndex(of: "."), dot != nameStart else { return "\(path).\(index)" }
        return "\(path[..<dot]).\(index)\(path[dot...])"
    }
}
