/// The four OAuth 1.0a secrets that sign requests for one user of one application.
public struct OAuthCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The application's consumer (API) key.
    public var consumerKey: String
    /// The application's consumer secret.
    public var consumerSecret: String
    /// The user's access token, if the request is made on a user's behalf.
    public var token: String?
    /// The secret of `token`.
    public var tokenSecret: String?

    /// Creates credentials; leave `token` nil to sign as the application alone.
    public init(consumerKey: String, consumerSecret: String, token: String? = nil, tokenSecret: String? = nil) {
        self.consumerKey = consumerKey
        self.consumerSecret = consumerSecret
        self.token = token
        self.tokenSecret = tokenSecret
    }

    /// Redacts the secrets so credentials can be logged safely.
    public var description: String {
        "OAuthCredentials(consumerKey: \(consumerKey), token: \(token ?? "none"), secrets: <redacted>)"
    }
}

extension OAuthCredentials: CustomReflectable {
    /// Keys and token only, so `dump` and debuggers show no secret either.
    public var customMirror: Mirror {
        Mirror(self, children: ["consumerKey": consumerKey, "token": token as Any, "secrets": "<redacted>"])
    }
}
