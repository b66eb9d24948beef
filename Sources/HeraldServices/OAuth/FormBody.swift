/// `application/x-www-form-urlencoded` bodies with RFC 3986 encoding.
public enum FormBody {
    /// The MIME type of a form body.
    public static let contentType = "application/x-www-form-urlencoded"

    /// Encodes pairs in order: `k=v&k=v`, both sides RFC 3986-encoded.
    public static func encode(_ pairs: [(String, String)]) -> String {
        PercentEncoding.formEncode(pairs)
    }

    /// Decodes a form body or query string; undecodable pieces are kept as they are.
    public static func decode(_ text: String) -> [(String, String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { piece in
            let parts = piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = String(parts[0])
            let value = parts.count > 1 ? String(parts[1]) : ""
            return (
                PercentEncoding.decode(key, plusAsSpace: true) ?? key,
                PercentEncoding.decode(value, plusAsSpace: true) ?? value
            )
        }
    }
}
