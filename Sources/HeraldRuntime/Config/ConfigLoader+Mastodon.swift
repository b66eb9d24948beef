import Foundation
import HeraldLoaders
import HeraldServices
import HeraldSubscribers

/// The `mastodon` service, loader and post rules of `config.json`.
extension ConfigLoader {
    /// A mastodon loader's own keys.
    static let mastodonLoaderKeys = ["timeline", "tag", "list", "account", "limit"]
    /// The keys a post rule has only with a mastodon service.
    static let mastodonRuleKeys = ["visibility", "spoiler", "language", "description"]
    /// The fields of a mastodon loader's `finished` event and of its new statuses.
    static let mastodonEventFields: (event: Set<String>, item: Set<String>?) = (
        ["loader", "timeline", "statuses", "newStatuses", "rateLimitRemaining"],
        ["id", "created_at", "account", "url", "content", "text", "visibility", "spoiler_text", "language", "media_attachments",
         "in_reply_to_id"])
    /// The most characters a status has on a Mastodon server by default (a server may allow more).
    static let mastodonCharacterLimit = 500

    /// `{"kind": "mastodon", "url": "https://…" | "sandbox", "token": secret, "timeout": duration}`.
    func readMastodonService(_ value: ConfigJSON, at path: String, _ reader: ConfigReader) -> ServiceConfiguration? {
        guard let fields = reader.object(value, at: path, allowed: ["kind", "url", "token", "timeout"] + Self.tlsKeys) else { return nil }
        let endpoint = reader.endpoint(fields, "url", at: path, required: true)
        let timeout = reader.duration(fields, "timeout", at: path, positive: true)
        let token = reader.secret(fields, "token", at: path)
        guard let endpoint, let token else { return nil }
        return .mastodon(endpoint: endpoint, token: token, timeout: timeout)
    }

    /// A mastodon loader's request: `timeline` (`home` by default, `public`, `local`, `hashtag`
    /// with `tag`, `list` with `list`, `account` with `account`) and `limit` (1…40).
    func readMastodonLoader(_ fields: [String: ConfigJSON], at path: String, _ reader: ConfigReader) -> MastodonLoader.Request? {
        let choices = ["home", "public", "local", "hashtag", "list", "account"]
        let timeline = fields["timeline"] == nil ? "home" : reader.choice(fields, "timeline", at: path, among: choices)
        let limit = reader.integer(fields, "limit", at: path, in: 1...40)
        if fields["limit"] != nil, limit == nil { return nil }
        let needs = ["hashtag": "tag", "list": "list", "account": "account"]
        var valid = timeline != nil
        for (kind, key) in needs.sorted(by: { $0.value < $1.value }) where fields[key] != nil && timeline != kind {
            reader.report("\(path).\(key)", "only for \"timeline\": \"\(kind)\"")
            valid = false
        }
        var which: MastodonTimeline?
        switch timeline {
        case "home"?: which = .home
        case "public"?: which = .federated
        case "local"?: which = .local
        case "hashtag"?:
            if var tag = reader.string(fields, "tag", at: path, required: true) {
                if tag.hasPrefix("#") { tag.removeFirst() }
                if tag.isEmpty || tag.contains(where: { $0.isWhitespace || $0 == "/" || $0 == "#" }) {
                    reader.report("\(path).tag", "\"\(tag)\" is not a hashtag (letters, digits and _, without spaces)")
                } else {
                    which = .hashtag(tag)
                }
            }
        case "list"?:
            which = reader.string(fields, "list", at: path, required: true).map { .list($0) }
        case "account"?:
            which = reader.string(fields, "account", at: path, required: true).map { .account($0) }
        default:
            break
        }
        guard valid, let which else { return nil }
        return MastodonLoader.Request(timeline: which, limit: limit)
    }

    /// Reports the mastodon-only keys of a rule whose service is of another kind; false when there were any.
    func reportMastodonOnlyKeys(_ fields: [String: ConfigJSON], path: String, serviceKind: String, _ reader: ConfigReader) -> Bool {
        var clean = true
        for key in Self.mastodonRuleKeys where fields[key] != nil {
            reader.report("\(path).\(key)", "only for a mastodon service; \"service\" is a \(serviceKind) service")
            clean = false
        }
        return clean
    }

    /// A rule's Mastodon status: `text` (required), `visibility`, `spoiler`, `language`, `media`
    /// (a file or `{"field": …}`), `description` (the media's alt text) and `inReplyTo` (a
    /// template of the id of the status it answers).
    func readMastodonTarget(_ fields: [String: ConfigJSON], path: String, baseDirectory: URL,
                            _ reader: ConfigReader) -> MastodonPostTemplate? {
        var valid = true
        for key in ["bucket", "fields"] where fields[key] != nil {
            reader.report("\(path).\(key)", "only for a baas service; a mastodon service posts \"text\"")
            valid = false
        }
        let text = template(fields, "text", at: path, required: true, reader)
        if let text, case let literal = Self.literalCharacters(of: text.source), literal > Self.mastodonCharacterLimit {
            reader.report("\(path).text", "without its placeholders the text is already \(literal) characters; "
                          + "a Mastodon status holds \(Self.mastodonCharacterLimit) by default")
            valid = false
        }
        let visibility = fields["visibility"] == nil ? nil
            : reader.choice(fields, "visibility", at: path, among: MastodonClient.visibilities.sorted())
        if fields["visibility"] != nil, visibility == nil { valid = false }
        let spoiler = fields["spoiler"] == nil ? nil : template(fields, "spoiler", at: path, required: false, reader)
        if fields["spoiler"] != nil, spoiler == nil { valid = false }
        var language: String?
        if let code = reader.string(fields, "language", at: path) {
            if (2...3).contains(code.count), code.allSatisfy({ $0.isASCII && $0.isLowercase }) {
                language = code
            } else {
                reader.report("\(path).language", "\"\(code)\" is not an ISO 639 language code (two or three lowercase letters, e.g. \"en\", \"ja\")")
                valid = false
            }
        }
        var media: MediaSource?
        switch fields["media"] {
        case nil: break
        case .string(let file)?:
            media = .file(file)
            if let problem = PathLimits.problem(file, against: baseDirectory) {
                reader.report("\(path).media", problem)
                valid = false
                break
            }
            var isDirectory: ObjCBool = false
            let resolved = Self.resolve(file, against: baseDirectory).path
            if MastodonClient.mediaType(forExtension: (file as NSString).pathExtension) == nil {
                reader.report("\(path).media", "\"\(file)\" is not an image, video or audio file (jpg, png, gif, webp, mp4, webm, mov, mp3, ogg, …)")
                valid = false
            } else if !FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory) || isDirectory.boolValue {
                reader.report("\(path).media", "no such file: \"\(file)\" (relative to the config's directory)")
                valid = false
            }
        case .object(let mediaFields)?:
            if let values = reader.object(.object(mediaFields), at: "\(path).media", allowed: ["field"]),
               let field = reader.string(values, "field", at: "\(path).media", required: true) {
                if let fieldPath = FieldPath(field) { media = .field(fieldPath) } else {
                    reader.report("\(path).media.field", "\"\(field)\" is not a field path")
                    valid = false
                }
            } else {
                valid = false
            }
        case let other?:
            reader.report("\(path).media", "expected a file path or {\"field\": \"…\"}, got \(other.shown)")
            valid = false
        }
        var description: PostTemplate?
        if fields["description"] != nil {
            description = template(fields, "description", at: path, required: false, reader)
            if description == nil { valid = false }
            if fields["media"] == nil {
                reader.report("\(path).description", "the media's alt text; there is no \"media\"")
                valid = false
            }
        }
        let inReplyTo = readReplyTemplate(fields, path: path, idCheck: { id in
            !id.isEmpty && !id.contains(where: { $0.isWhitespace }) ? nil : "not a status id"
        }, reader)
        if fields["inReplyTo"] != nil, inReplyTo == nil { valid = false }
        guard valid, let text else { return nil }
        return MastodonPostTemplate(text: text, visibility: visibility, spoiler: spoiler, language: language, media: media,
                                    description: description, inReplyTo: inReplyTo)
    }

    /// The keys of a Mastodon target that read fields, with their paths.
    static func mastodonFieldUses(of template: MastodonPostTemplate, path: String) -> [(path: String, fields: [FieldPath])] {
        var uses: [(path: String, fields: [FieldPath])] = [("\(path).text", template.text.fieldPaths)]
        if let spoiler = template.spoiler { uses.append(("\(path).spoiler", spoiler.fieldPaths)) }
        if case .field(let field)? = template.media { uses.append(("\(path).media.field", [field])) }
        if let description = template.description { uses.append(("\(path).description", description.fieldPaths)) }
        if let inReplyTo = template.inReplyTo { uses.append(("\(path).inReplyTo", inReplyTo.fieldPaths)) }
        return uses
    }
}
