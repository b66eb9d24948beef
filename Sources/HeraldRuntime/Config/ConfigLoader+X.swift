import Foundation
import HeraldLoaders
import HeraldServices

/// X API v2: a twitter service with `"api": "v2"`, and timeline loaders on it.
extension ConfigLoader {
    /// The API versions a twitter service may speak.
    static let twitterAPIs = ["v1.1", "v2"]

    /// `v1.1` (the default, the seeds' emulation) or `v2`; an invalid `api` is reported and read as `v1.1`.
    static func twitterAPI(_ value: ConfigJSON, at path: String, _ reader: ConfigReader) -> String {
        guard case .object(let fields) = value, fields["api"] != nil else { return "v1.1" }
        return reader.choice(fields, "api", at: path, among: twitterAPIs) ?? "v1.1"
    }

    /// `{"kind": "twitter", "api": "v2", "url", "auth", "timeout"}`: `auth` is either the four
    /// OAuth 1.0a secrets (`consumerKey`, `consumerSecret`, `token`, `tokenSecret`) or
    /// `{"bearer": <secret>}`, an OAuth 2.0 user access token.
    func readXService(_ value: ConfigJSON, at path: String, _ reader: ConfigReader) -> ServiceConfiguration? {
        guard let fields = reader.object(value, at: path, allowed: ["kind", "url", "api", "auth", "timeout"] + Self.tlsKeys) else { return nil }
        let endpoint = reader.endpoint(fields, "url", at: path, required: true)
        let timeout = reader.duration(fields, "timeout", at: path, positive: true)
        let authPath = "\(path).auth"
        guard let auth = fields["auth"] else {
            reader.report(authPath, "required: {\"bearer\": …} (an OAuth 2.0 user access token) or the OAuth 1.0a consumerKey, consumerSecret, token and tokenSecret")
            return nil
        }
        let oauth1Keys = ["consumerKey", "consumerSecret", "token", "tokenSecret"]
        guard let keys = reader.object(auth, at: authPath, allowed: ["bearer"] + oauth1Keys) else { return nil }
        let authorization: XAuthorization?
        if keys["bearer"] != nil {
            let mixed = oauth1Keys.filter { keys[$0] != nil }
            if !mixed.isEmpty {
                reader.report(authPath, "either \"bearer\" or the four OAuth 1.0a secrets, not both (found \(mixed.joined(separator: ", ")) with bearer)")
                return nil
            }
            authorization = reader.secret(keys, "bearer", at: authPath).map { .bearer($0) }
        } else {
            let consumerKey = reader.secret(keys, "consumerKey", at: authPath)
            let consumerSecret = reader.secret(keys, "consumerSecret", at: authPath)
            let token = reader.secret(keys, "token", at: authPath)
            let tokenSecret = reader.secret(keys, "tokenSecret", at: authPath)
            if let consumerKey, let consumerSecret, let token, let tokenSecret {
                authorization = .oauth1(OAuthCredentials(consumerKey: consumerKey, consumerSecret: consumerSecret, token: token, tokenSecret: tokenSecret))
            } else {
                authorization = nil
            }
        }
        guard let endpoint, let authorization else { return nil }
        return .x(endpoint: endpoint, authorization: authorization, timeout: timeout)
    }

    /// Whether the loader's `service` names a twitter service with `"api": "v2"`.
    static func isXService(_ fields: [String: ConfigJSON], _ services: [String: ServiceConfiguration?]?) -> Bool {
        guard case .string(let name)? = fields["service"], case .x?? = services?[name] else { return false }
        return true
    }

    /// A timeline loader on an X API v2 service: `timeline` `home` (default), `user` with
    /// `screenName`, or `search` with `query`; `count` is `max_results` within the endpoint's
    /// range (home 1…100, user 5…100, search 10…100); `format` may only be `json`.
    func readXTimeline(_ fields: [String: ConfigJSON], at path: String, _ reader: ConfigReader) -> LoaderConfiguration.Kind? {
        let timeline = reader.choice(fields, "timeline", at: path, among: ["home", "user", "search"]) ?? "home"
        let screenName = reader.string(fields, "screenName", at: path, required: timeline == "user")
        let query = reader.string(fields, "query", at: path, required: timeline == "search")
        if timeline != "user", screenName != nil { reader.report("\(path).screenName", "only for \"timeline\": \"user\"") }
        if timeline != "search", query != nil { reader.report("\(path).query", "only for \"timeline\": \"search\"") }
        if let query, query.trimmingCharacters(in: .whitespaces).isEmpty { reader.report("\(path).query", "must not be empty") }
        if let screenName, screenName.isEmpty || !screenName.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) {
            reader.report("\(path).screenName", "\"\(screenName)\" is not an X username (letters, digits and _)")
        }
        let range: ClosedRange<Int> = switch timeline {
        case "user": 5...100
        case "search": 10...100
        default: 1...100
        }
        var count: Int?
        if fields["count"] != nil {
            count = reader.integer(fields, "count", at: path, in: range)
        }
        if let format = reader.choice(fields, "format", at: path, among: ["json", "xml"]), format != "json" {
            reader.report("\(path).format", "X API v2 answers JSON only")
        }
        let which: XTimelineLoader.Timeline? = switch timeline {
        case "user": screenName.map { .user(username: $0) }
        case "search": query.map { .search(query: $0) }
        default: .home
        }
        return which.map { .xTimeline(XTimelineLoader.Request(timeline: $0, maxResults: count)) }
    }
}
