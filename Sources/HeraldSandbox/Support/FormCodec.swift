import Foundation

/// Form and query encoding for the sandbox, on Foundation's percent-encoding (independent of
/// HeraldServices' hand-written encoder).
enum FormCodec {
    /// RFC 3986 unreserved characters.
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    static func decode(_ text: String) -> [(String, String)] {
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
