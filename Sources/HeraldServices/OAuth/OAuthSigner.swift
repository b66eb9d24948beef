import Foundation

/// Signs requests with OAuth 1.0a HMAC-SHA1 (RFC 5849), as the Twitter-style API requires.
///
/// The signature covers the query parameters, the form-urlencoded body parameters and the
/// `oauth_*` parameters; multipart bodies are not covered. Nonce and timestamp are injected
/// so signatures are reproducible in tests.
public struct OAuthSigner: Sendable {
    /// The credentials that sign.
    public var credentials: OAuthCredentials
    /// Whether `oauth_version="1.0"` is sent (optional in RFC 5849; Twitter sends it).
    public var includesVersion: Bool
    /// Makes a fresh nonce per request.
    public var makeNonce: @Sendable () -> String
    /// The current time in seconds since 1970.
    public var makeTimestamp: @Sendable () -> Int

    /// Creates a signer with a random nonce and the system clock unless told otherwise.
    public init(
        credentials: OAuthCredentials,
        includesVersion: Bool = true,
        makeNonce: @escaping @Sendable () -> String = OAuthSigner.randomNonce,
        makeTimestamp: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }
    ) {
        self.credentials = credentials
        self.includesVersion = includesVersion
        self.makeNonce = makeNonce
        self.makeTimestamp = makeTimestamp
    }

    /// 32 random letters and digits.
    @Sendable public static func randomNonce() -> String {
        let characters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<32).map { _ in characters[Int(generator.next() % UInt64(characters.count))] })
    }

    /// The `Authorization` header value for a request.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, e.g. `POST`.
    ///   - url: the full request URL, query included.
    ///   - bodyParameters: decoded form-urlencoded body parameters (none for other bodies).
    public func authorizationHeader(method: String, url: URL, bodyParameters: [(String, String)] = []) -> String {
        var oauth = oauthParameters()
        let signature = Self.signature(
            method: method, url: url, parameters: bodyParameters + oauth,
            consumerSecret: credentials.consumerSecret, tokenSecret: credentials.tokenSecret)
        oauth.append(("oauth_signature", signature))
        oauth.sort { $0.0 < $1.0 }
        let fields = oauth.map { "\(PercentEncoding.encode($0.0))=\"\(PercentEncoding.encode($0.1))\"" }
        return "OAuth " + fields.joined(separator: ", ")
    }

    /// The `oauth_*` protocol parameters for one request, without the signature.
    public func oauthParameters() -> [(String, String)] {
        var parameters: [(String, String)] = [
            ("oauth_consumer_key", credentials.consumerKey),
            ("oauth_nonce", makeNonce()),
            ("oauth_signature_method", "HMAC-SHA1"),
            ("oauth_timestamp", String(makeTimestamp())),
        ]
        if let token = credentials.token { parameters.append(("oauth_token", token)) }
        if includesVersion { parameters.append(("oauth_version", "1.0")) }
        return parameters
    }

    /// The base64 HMAC-SHA1 signature of a request.
    ///
    /// `parameters` are the body and `oauth_*` parameters (decoded); the URL's query is added
    /// here. `oauth_signature` and `realm` are ignored if present.
    public static func signature(
        method: String, url: URL, parameters: [(String, String)],
        consumerSecret: String, tokenSecret: String?
    ) -> String {
        let base = signatureBaseString(method: method, url: url, parameters: parameters)
        let key = PercentEncoding.encode(consumerSecret) + "&" + PercentEncoding.encode(tokenSecret ?? "")
        return Base64.encode(HMACSHA1.authenticationCode(key: key, message: base))
    }

    /// The signature base string of RFC 5849 §3.4.1: `METHOD&enc(base URL)&enc(parameters)`.
    public static func signatureBaseString(method: String, url: URL, parameters: [(String, String)]) -> String {
        let all: [(String, String)] = queryParameters(of: url) + parameters
        var encoded: [(key: String, value: String)] = []
        for (key, value) in all where key != "oauth_signature" && key != "realm" {
            encoded.append((PercentEncoding.encode(key), PercentEncoding.encode(value)))
        }
        encoded.sort { lhs, rhs in lhs.key == rhs.key ? lhs.value < rhs.value : lhs.key < rhs.key }
        let normalized: String = encoded.map { pair in pair.key + "=" + pair.value }.joined(separator: "&")
        let encodedURL: String = PercentEncoding.encode(baseURLString(of: url))
        let encodedParameters: String = PercentEncoding.encode(normalized)
        return [method.uppercased(), encodedURL, encodedParameters].joined(separator: "&")
    }

    /// `scheme://host[:port]/path` with lowercase scheme and host and the default port dropped.
    public static func baseURLString(of url: URL) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        let scheme = (components?.scheme ?? "http").lowercased()
        let host = (components?.host ?? "").lowercased()
        var authority = host
        if let port = components?.port, !(scheme == "http" && port == 80), !(scheme == "https" && port == 443) {
            authority += ":\(port)"
        }
        var path = components?.percentEncodedPath ?? ""
        if path.isEmpty { path = "/" }
        return scheme + "://" + authority + path
    }

    /// The URL's query as decoded pairs (`+` read as a space, as in a form body).
    public static func queryParameters(of url: URL) -> [(String, String)] {
        guard let query = URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedQuery,
            !query.isEmpty
        else { return [] }
        return FormBody.decode(query)
    }
}
