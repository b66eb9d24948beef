import Foundation
import HeraldServices

/// What a rule whose service is a Mastodon server posts: the status's templates and options.
public struct MastodonPostTemplate: Sendable, Hashable {
    /// The status's text.
    public var text: PostTemplate
    /// `public`, `unlisted`, `private` or `direct`; the account's default when nil.
    public var visibility: String?
    /// The content warning, if any.
    public var spoiler: PostTemplate?
    /// ISO 639 language code, if given.
    public var language: String?
    /// A media file to attach (image, video or audio), if any.
    public var media: MediaSource?
    /// The media's alt text, if any.
    public var description: PostTemplate?
    /// The id of the status this one replies to (`in_reply_to_id`), if any.
    public var inReplyTo: PostTemplate?

    /// Creates the templates of a Mastodon post.
    public init(text: PostTemplate, visibility: String? = nil, spoiler: PostTemplate? = nil, language: String? = nil,
                media: MediaSource? = nil, description: PostTemplate? = nil, inReplyTo: PostTemplate? = nil) {
        self.text = text
        self.visibility = visibility
        self.spoiler = spoiler
        self.language = language
        self.media = media
        self.description = description
        self.inReplyTo = inReplyTo
    }

    /// Every template, for validation.
    var templates: [PostTemplate] {
        var all = [text]
        if let spoiler { all.append(spoiler) }
        if case .field(let path)? = media, let template = try? PostTemplate("{{\(path)}}") { all.append(template) }
        if let description { all.append(description) }
        if let inReplyTo { all.append(inReplyTo) }
        return all
    }

    /// The post, every template filled.
    func render(_ context: PostContext) throws(PostRenderError) -> MastodonPostContent {
        let path: String?
        switch media {
        case nil: path = nil
        case .file(let file)?: path = file
        case .field(let field)?:
            guard case .string(let value)? = context.value(at: field), !value.isEmpty else {
                throw PostRenderError(field: field.description, template: "media")
            }
            path = value
        }
        return MastodonPostContent(text: try text.render(context), visibility: visibility, spoiler: try spoiler?.render(context),
                                   language: language, media: path, description: try description?.render(context),
                                   inReplyTo: try inReplyTo?.render(context))
    }
}

/// A Mastodon post rendered, as the outbox keeps it.
public struct MastodonPostContent: Sendable, Hashable, Codable {
    /// The status's text.
    public var text: String
    /// The visibility, if given.
    public var visibility: String?
    /// The content warning, if any.
    public var spoiler: String?
    /// The language, if given.
    public var language: String?
    /// A media file's path, if any.
    public var media: String?
    /// The media's alt text, if any.
    public var description: String?
    /// The id of the status it replies to, if any (absent from outbox lines written before
    /// replies existed, which read as nil).
    public var inReplyTo: String?

    /// Creates a rendered post.
    public init(text: String, visibility: String? = nil, spoiler: String? = nil, language: String? = nil, media: String? = nil,
                description: String? = nil, inReplyTo: String? = nil) {
        self.text = text
        self.visibility = visibility
        self.spoiler = spoiler
        self.language = language
        self.media = media
        self.description = description
        self.inReplyTo = inReplyTo
    }
}

extension PostRule.Target {
    /// The media a target attaches, if any (a cluster node must be allowed to read it).
    public var mediaSource: MediaSource? {
        switch self {
        case .status(_, let media, _): media
        case .object: nil
        case .mastodonStatus(let template): template.media
        case .webhook: nil
        }
    }
}
