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

    /// Creates a state.
    public init(sinceID: String? = nil, seen: [String] = []) {
        self.version = Self.currentVersion
        self.sinceID = sinceID
        self.seen = seen
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
