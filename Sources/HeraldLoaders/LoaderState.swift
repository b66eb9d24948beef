/// What a loader remembers between loads and across restarts.
public struct LoaderState: Sendable, Hashable, Codable {
    /// The only version this Herald reads and writes.
    public static let currentVersion = 1
    /// The largest status id the Twitter-style service hands out: ids are signed 64-bit.
    public static let largestStatusID: Int64 = .max
    /// The longest item id kept in ``seen``.
    public static let itemIDLimit = 256

    /// The file format's version.
    public var version: Int
    /// The newest status id seen (timelines).
    public var sinceID: String?
    /// The item ids seen (Tiqav images, todos), oldest first.
    public var seen: [String]
    /// A feed's last `ETag`, sent back as `If-None-Match` (feeds only; absent in older files).
    public var etag: String?
    /// A feed's last `Last-Modified`, sent back as `If-Modified-Since` (feeds only).
    public var lastModified: String?

    /// Creates a state.
    public init(sinceID: String? = nil, seen: [String] = [], etag: String? = nil, lastModified: String? = nil) {
        self.version = Self.currentVersion
        self.sinceID = sinceID
        self.seen = seen
        self.etag = etag
        self.lastModified = lastModified
    }

    /// What makes a state read from a file untrustworthy, or nil when it can be used: a version
    /// this Herald does not know, a `sinceID` that is not a status id (decimal digits, 1 to
    /// ``largestStatusID``: a larger one would hide every new status, forever), an empty or
    /// overlong id in `seen`.
    public var problem: String? {
        guard version == Self.currentVersion else {
            return "unsupported version \(version) (this Herald reads version \(Self.currentVersion))"
        }
        if let sinceID, !Self.isStatusID(sinceID) {
            return "sinceID \"\(Self.excerpt(sinceID))\" is not a status id (decimal digits, 1 to \(Self.largestStatusID))"
        }
        if let index = seen.firstIndex(where: { $0.isEmpty || $0.utf8.count > Self.itemIDLimit }) {
            return "seen[\(index)] is not an item id (empty, or longer than \(Self.itemIDLimit) bytes)"
        }
        for (name, value) in [("etag", etag), ("lastModified", lastModified)] {
            if let value, value.isEmpty || value.utf8.count > Self.itemIDLimit || !value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
                return "\(name) is not a validator a server sends (empty, longer than \(Self.itemIDLimit) bytes, or not printable ASCII)"
            }
        }
        return nil
    }

    /// Whether `text` is a status id the service can hand out.
    public static func isStatusID(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let value = Int64(text) else { return false }
        return value >= 1 && value <= largestStatusID
    }

    /// At most 40 characters of `text`, so a report of a huge value stays one readable line.
    private static func excerpt(_ text: String) -> String {
        text.count <= 40 ? text : String(text.prefix(40)) + "…"
    }
}
