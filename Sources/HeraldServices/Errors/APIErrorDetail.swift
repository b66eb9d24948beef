/// One entry of a service's own error body: `{"errors":[{"code":88,"message":"…"}]}`.
public struct APIErrorDetail: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The service's error code, e.g. 187 for a duplicate status.
    public var code: Int
    /// The service's message.
    public var message: String

    /// Creates a detail.
    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}
