import Foundation

/// What one fetch of a feed gave.
public struct FeedFetch: Sendable, Hashable {
    /// The document; nil when the server said it has not changed (304).
    public var document: FeedDocument?
    /// The validators to send next time.
    public var validators: FeedValidators
    /// The URL that answered (after redirects).
    public var url: URL
    /// Where the feed moved permanently (the first redirect was 301 or 308), if it did.
    public var movedTo: URL?
}
