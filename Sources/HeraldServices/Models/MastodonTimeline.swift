import Foundation

/// Which Mastodon timeline to read.
public enum MastodonTimeline: Sendable, Hashable, CustomStringConvertible {
    /// The signed-in user's home timeline (`/api/v1/timelines/home`).
    case home
    /// The federated timeline (`/api/v1/timelines/public`).
    case federated
    /// The server's local timeline (`/api/v1/timelines/public?local=true`).
    case local
    /// A hashtag's timeline, without the `#` (`/api/v1/timelines/tag/:hashtag`).
    case hashtag(String)
    /// A list's timeline by the list's id (`/api/v1/timelines/list/:list_id`).
    case list(String)
    /// An account's statuses by the account's id (`/api/v1/accounts/:id/statuses`).
    case account(String)

    /// The request path.
    var path: String {
        switch self {
        case .home: "/api/v1/timelines/home"
        case .federated, .local: "/api/v1/timelines/public"
        case .hashtag(let tag): "/api/v1/timelines/tag/\(PercentEncoding.encode(tag))"
        case .list(let id): "/api/v1/timelines/list/\(PercentEncoding.encode(id))"
        case .account(let id): "/api/v1/accounts/\(PercentEncoding.encode(id))/statuses"
        }
    }

    /// `home`, `public`, `local`, `hashtag #swift`, `list 42`, `account 1`.
    public var description: String {
        switch self {
        case .home: "home"
        case .federated: "public"
        case .local: "local"
        case .hashtag(let tag): "hashtag #\(tag)"
        case .list(let id): "list \(id)"
        case .account(let id): "account \(id)"
        }
    }
}

/// What to ask a Mastodon timeline for.
public struct MastodonTimelineQuery: Sendable, Hashable {
    /// Statuses per page, 1…40 (the server's default, 20, when nil).
    public var limit: Int?
    /// Only statuses immediately newer than this id (a cursor paging forward).
    public var minID: String?
    /// Only statuses newer than this id (the newest page above it).
    public var sinceID: String?
    /// Only statuses older than this id.
    public var maxID: String?

    /// Creates a query.
    public init(limit: Int? = nil, minID: String? = nil, sinceID: String? = nil, maxID: String? = nil) {
        self.limit = limit
        self.minID = minID
        self.sinceID = sinceID
        self.maxID = maxID
    }
}

/// One page of a Mastodon timeline.
public struct MastodonTimelinePage: Sendable, Hashable {
    /// The statuses, newest first, as the server sent them.
    public var statuses: [MastodonStatus]
    /// The rate-limit state the server reported.
    public var rateLimit: RateLimit?
    /// The `Link` header's `prev` page (newer statuses) as its query: `min_id` or `since_id`.
    public var previous: MastodonPageLink?
    /// The `Link` header's `next` page (older statuses): `max_id`.
    public var next: MastodonPageLink?
    /// Whether the server said the feed was still being built (206 Partial Content on home).
    public var partial: Bool

    /// Creates a page.
    public init(statuses: [MastodonStatus], rateLimit: RateLimit? = nil, previous: MastodonPageLink? = nil,
                next: MastodonPageLink? = nil, partial: Bool = false) {
        self.statuses = statuses
        self.rateLimit = rateLimit
        self.previous = previous
        self.next = next
        self.partial = partial
    }
}

/// A page named by a `Link` header: its URL and its cursor parameters.
public struct MastodonPageLink: Sendable, Hashable {
    /// The URL as the server wrote it.
    public var url: String
    /// Its `min_id`, if any.
    public var minID: String?
    /// Its `since_id`, if any.
    public var sinceID: String?
    /// Its `max_id`, if any.
    public var maxID: String?

    /// Creates a link.
    public init(url: String, minID: String? = nil, sinceID: String? = nil, maxID: String? = nil) {
        self.url = url
        self.minID = minID
        self.sinceID = sinceID
        self.maxID = maxID
    }

    /// The `prev` and `next` links of a `Link` header (`<url>; rel="next", <url>; rel="prev"`);
    /// anything unreadable is skipped.
    public static func parse(_ header: String?) -> (previous: MastodonPageLink?, next: MastodonPageLink?) {
        guard let header else { return (nil, nil) }
        var previous: MastodonPageLink?
        var next: MastodonPageLink?
        for part in header.split(separator: ",") {
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = pieces.first, first.hasPrefix("<"), first.hasSuffix(">"), first.count >= 2 else { continue }
            let url = String(first.dropFirst().dropLast())
            let relation = pieces.dropFirst().compactMap { piece -> String? in
                let pair = piece.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2, pair[0].lowercased() == "rel" else { return nil }
                return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }.first
            var link = MastodonPageLink(url: url)
            let query = url.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
            for item in query.split(separator: "&") {
                let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2, !pair[1].isEmpty else { continue }
                let value = pair[1].removingPercentEncoding ?? pair[1]
                switch pair[0] {
                case "min_id": link.minID = value
                case "since_id": link.sinceID = value
                case "max_id": link.maxID = value
                default: break
                }
            }
            switch relation?.lowercased() {
            case "prev"?, "previous"?: previous = link
            case "next"?: next = link
            default: break
            }
        }
        return (previous, next)
    }
}
