import Foundation
import HeraldIO
import HeraldServices

/// A `"kind": "feed"` loader's own settings: where the feed is, the deadline of one fetch and
/// the largest body read, and how an https feed is verified.
public struct FeedSettings: Sendable, Hashable {
    /// Where a feed is.
    public enum Location: Sendable, Hashable, CustomStringConvertible {
        /// A path on the embedded sandbox (`"sandbox:/feeds/news.rss"` in the config).
        case sandbox(path: String)
        /// An http(s) URL.
        case url(URL)

        /// As written in the config.
        public var description: String {
            switch self {
            case .sandbox(let path): "sandbox:\(path)"
            case .url(let url): url.absoluteString
            }
        }
    }

    /// Where the feed is.
    public var location: Location
    /// The deadline of one fetch (the transport's default, 30 s, when nil).
    public var timeout: Duration?
    /// The largest body read, in bytes.
    public var maxBytes: Int

    /// The feed's `caFile` / `insecure` (an https feed only); nil verifies it against the system's
    /// CA store.
    public var tls: TLSConfiguration?

    /// Creates settings.
    public init(location: Location, timeout: Duration? = nil, maxBytes: Int = FeedClient.defaultMaxBytes, tls: TLSConfiguration? = nil) {
        self.location = location
        self.timeout = timeout
        self.maxBytes = maxBytes
        self.tls = tls
    }
}
