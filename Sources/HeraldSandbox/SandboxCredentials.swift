/// The OAuth 1.0a credentials the sandbox accepts; sign requests with these (they are not
/// secret: they exist only on the loopback interface).
public struct SandboxCredentials: Sendable, Hashable, Codable {
    /// The consumer key.
    public var consumerKey: String
    /// The consumer secret.
    public var consumerSecret: String
    /// The access token.
    public var token: String
    /// The access token secret.
    public var tokenSecret: String

    /// Creates credentials.
    public init(consumerKey: String, consumerSecret: String, token: String, tokenSecret: String) {
        self.consumerKey = consumerKey
        self.consumerSecret = consumerSecret
        self.token = token
        self.tokenSecret = tokenSecret
    }

    /// The default sandbox credentials, also shown in `config.json`.
    public static let standard = SandboxCredentials(
        consumerKey: "sandbox-consumer-key", consumerSecret: "sandbox-consumer-secret",
        token: "1-sandbox-access-token", tokenSecret: "sandbox-token-secret")
}
