/// Why an HTTP/1.1 message could not be written or read: what was malformed or missing,
/// never a header's value.
struct HTTP1ResponseError: Error, Sendable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
