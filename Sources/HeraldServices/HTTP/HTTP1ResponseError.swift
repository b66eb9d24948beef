/// Why an HTTP/1.1 message could not be written or read: what was malformed or missing,
/// never a header's value.
struct HTTP1ResponseError: Error, Sendable {
    let reason: String
    /// Whether the body went over the request's bound (a bad answer, not a broken connection).
    let isTooLarge: Bool
    init(_ reason: String, isTooLarge: Bool = false) {
        self.reason = reason
        self.isTooLarge = isTooLarge
    }

    /// The body is larger than `limit` bytes.
    static func tooLarge(_ limit: Int) -> HTTP1ResponseError {
        HTTP1ResponseError("the response body is larger than \(ByteCountText.describe(limit))", isTooLarge: true)
    }
}

/// Byte counts as people read them: `64 MiB`, `512 KiB`, `100 bytes`.
enum ByteCountText {
    static func describe(_ count: Int) -> String {
        if count >= 1 << 20 && count % (1 << 20) == 0 { return "\(count >> 20) MiB" }
        if count >= 1 << 10 && count % (1 << 10) == 0 { return "\(count >> 10) KiB" }
        return "\(count) bytes"
    }
}
