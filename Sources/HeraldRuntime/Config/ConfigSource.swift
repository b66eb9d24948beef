import Foundation
import HeraldServices

/// Where a configuration came from: its file's SHA-1, when it was read, and the sections as
/// written (what a reload compares, so a change is what the operator wrote, whatever defaults
/// fill in).
public struct ConfigSource: Sendable {
    /// The SHA-1 of the file's bytes, in lowercase hex (`sha1:` is not included).
    public var sha1: String
    /// When it was read.
    public var loadedAt: Date
    /// The top-level object as written.
    var sections: [String: JSONValue]

    init(data: Data, loadedAt: Date, sections: [String: JSONValue]) {
        self.sha1 = SHA1.hash(Array(data)).map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined()
        self.loadedAt = loadedAt
        self.sections = sections
    }

    /// The entries of the object section `name` (`services`, `loaders`, `subscribers`).
    func entries(_ name: String) -> [String: JSONValue] {
        if case .object(let entries)? = sections[name] { entries } else { [:] }
    }
}
