import Foundation

/// How requests to X API v2 prove who makes them: OAuth 1.0a user context (the four secrets,
/// each request signed with HMAC-SHA1) or an OAuth 2.0 user access token (`Bearer`).
public enum XAuthorization: Sendable, Hashable, CustomStringConvertible {
    /// OAuth 1.0a user context. A JSON body is not part of the signature base string; only the
    /// query and the `oauth_*` parameters are.
    case oauth1(OAuthCredentials)
    /// An OAuth 2.0 user access token, sent as `Authorization: Bearer <token>`.
    case bearer(String)

    /// The kind of authorization, never a secret.
    public var description: String {
        switch self {
        case .oauth1(let credentials): "OAuth 1.0a (\(credentials))"
        case .bearer: "OAuth 2.0 user token <redacted>"
        }
    }

    /// The `Authorization` header value for a request with no form body.
    func header(method: String, url: URL, signer: OAuthSigner?) -> String {
        switch self {
        case .oauth1(let credentials):
            (signer ?? OAuthSigner(credentials: credentials)).authorizationHeader(method: method, url: url)
        case .bearer(let token):
            "Bearer " + token
        }
    }
}

extension XAuthorization: CustomReflectable {
    /// No secret in `dump` or a debugger either.
    public var customMirror: Mirror {
        switch self {
        case .oauth1(let credentials): Mirror(self, children: ["oauth1": credentials])
        case .bearer: Mirror(self, children: ["bearer": "<redacted>"])
        }
    }
}
