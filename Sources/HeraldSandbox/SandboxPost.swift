/// A status posted to the sandbox, as recorded for tests and users.
public struct SandboxPost: Sendable, Hashable, Codable {
    /// The new status id.
    public var id: String
    /// The text as received, decoded.
    public var text: String
    /// The status it replies to, if any.
    public var inReplyToStatusID: String?
    /// The attached media ids.
    public var mediaIDs: [String]
}
