import Foundation

/// Form and query encoding (`application/x-www-form-urlencoded`, query strings) on Foundation's
/// percent-encoding, independent of HeraldServices' hand-written encoder.
public enum FormCodec {
    /// RFC 3986 unreserved characters.
    public static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// `text` percent-encoded: everything but the unreserved characters as UTF-8 `%XX`.
    public static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// `a=1&b=x+y` as name-value pairs in order, `+` as a space, percent-escapes decoded.
    public static func decode(_ text: String) -> [(String, String)] {
        text.split(separator: "&").map { piece in
            let parts = piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func clean(_ raw: Substring) -> String {
                let spaced = raw.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            return (clean(parts[0]), parts.count > 1 ? clean(parts[1]) : "")
        }
    }
}
