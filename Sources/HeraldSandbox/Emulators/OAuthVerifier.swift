import Foundation
import HeraldHTTP

/// Checks OAuth 1.0a HMAC-SHA1 signatures the way the Twitter API does, with its own base
/// string and digest code.
struct OAuthVerifier: Sendable {
    enum Verdict: Equatable {
        case valid
        /// 400 / 215: no or unreadable Authorization header.
        case badAuthenticationData
        /// 401 / 89: unknown token.
        case invalidToken
        /// 401 / 32: wrong consumer key or signature.
        case couldNotAuthenticate
        /// 401 / 135: the timestamp is too far from the sandbox's clock.
        case timestampOutOfBounds
    }

    let credentials: SandboxCredentials
    var timestampTolerance: TimeInterval?
    var now: @Sendable () -> Date = { Date() }

    func verify(_ request: SandboxRequest) -> Verdict {
        guard let header = request.header("Authorization"), header.hasPrefix("OAuth "),
            let oauth = Self.parseHeader(String(header.dropFirst(6)))
        else { return .badAuthenticationData }
        let values = Dictionary(oauth, uniquingKeysWith: { first, _ in first })
        guard let signature = values["oauth_signature"], values["oauth_signature_method"] == "HMAC-SHA1",
            values["oauth_nonce"] != nil, values["oauth_timestamp"] != nil
        else { return .badAuthenticationData }
        guard values["oauth_consumer_key"] == credentials.consumerKey else { return .couldNotAuthenticate }
        guard values["oauth_token"] == credentials.token else { return .invalidToken }
        if let tolerance = timestampTolerance {
            guard let timestamp = values["oauth_timestamp"].flatMap(Double.init),
                abs(timestamp - now().timeIntervalSince1970) <= tolerance
            else { return .timestampOutOfBounds }
        }
        let parameters = request.queryItems + request.formItems + oauth
        let expected = Self.signature(
            method: request.method, baseURL: baseURL(of: request), parameters: parameters,
            consumerSecret: credentials.consumerSecret, tokenSecret: credentials.tokenSecret)
        return expected == signature ? .valid : .couldNotAuthenticate
    }

    /// `http://host[:port]/path` as the client must have signed it.
    private func baseURL(of request: SandboxRequest) -> String {
        var host = (request.header("Host") ?? "127.0.0.1").lowercased()
        if host.hasSuffix(":80") { host.removeLast(3) }
        return "http://" + host + request.rawPath
    }

    static func signature(
        method: String, baseURL: String, parameters: [(String, String)], consumerSecret: String, tokenSecret: String
    ) -> String {
        let pairs = parameters.filter { $0.0 != "oauth_signature" && $0.0 != "realm" }
            .map { (FormCodec.encode($0.0), FormCodec.encode($0.1)) }
            .sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        let parameterString = pairs.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        let base = "\(method.uppercased())&\(FormCodec.encode(baseURL))&\(FormCodec.encode(parameterString))"
        let key = "\(FormCodec.encode(consumerSecret))&\(FormCodec.encode(tokenSecret))"
        let digest = SandboxDigest.hmacSHA1(key: Array(key.utf8), message: Array(base.utf8))
        return Data(digest).base64EncodedString()
    }

    /// `k="v", k="v"` → decoded pairs; nil when a field is not `k="v"`.
    static func parseHeader(_ text: String) -> [(String, String)]? {
        var result: [(String, String)] = []
        for field in text.split(separator: ",") {
            let trimmed = field.trimmingCharacters(in: .whitespaces)
            guard let equals = trimmed.firstIndex(of: "=") else { return nil }
            let key = String(trimmed[..<equals])
            var value = String(trimmed[trimmed.index(after: equals)...])
            guard value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") else { return nil }
            value = String(value.dropFirst().dropLast())
            guard let decodedKey = key.removingPercentEncoding, let decodedValue = value.removingPercentEncoding else { return nil }
            if decodedKey != "realm" { result.append((decodedKey, decodedValue)) }
        }
        return result
    }
}
