import Foundation

/// The Mastodon API's JSON shapes, written from the emulator's state with the sandbox's own
/// JSON writer (no code shared with the clients).
enum MastodonEncoding {
    static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    static func account(_ person: MastodonFixtures.Person, origin: String) -> SandboxJSON {
        .object([
            ("id", .string(person.id)), ("username", .string(person.username)), ("acct", .string(person.acct)),
            ("display_name", .string(person.displayName)), ("locked", .bool(false)), ("bot", .bool(person.username.contains("bot"))),
            ("created_at", .string("2016-03-16T14:34:26.392Z")), ("note", .string("<p>A sandbox account</p>")),
            ("url", .string("\(origin)/@\(person.acct)")),
            ("avatar", .string("\(origin)/avatars/original/missing.png")), ("avatar_static", .string("\(origin)/avatars/original/missing.png")),
            ("header", .string("\(origin)/headers/original/missing.png")), ("header_static", .string("\(origin)/headers/original/missing.png")),
            ("followers_count", .int(42)), ("following_count", .int(7)), ("statuses_count", .int(100)),
            ("last_status_at", .string("2019-12-05")), ("emojis", .array([])), ("fields", .array([])),
        ])
    }

    static func media(_ media: MastodonState.Media, origin: String) -> SandboxJSON {
        let url = "\(origin)/system/media/\(media.id)"
        return .object([
            ("id", .string(media.id)), ("type", .string(media.type)),
            ("url", media.processed ? .string(url) : .null), ("preview_url", .string(url + "?preview=1")),
            ("remote_url", .null), ("text_url", .null), ("meta", .object([])),
            ("description", media.description.map { .string($0) } ?? .null), ("blurhash", .null),
        ])
    }

    /// The content as sanitised HTML: the text escaped (line breaks as `<br>`), a hashtag
    /// paragraph, sometimes a custom emoji shortcode and a long link marked up as Mastodon does.
    static func content(_ status: MastodonState.StoredStatus, origin: String) -> String {
        if status.posted {
            return "<p>" + escape(status.text).replacingOccurrences(of: "\n", with: "<br />") + "</p>"
        }
        var html = "<p>" + escape(status.text).replacingOccurrences(of: "\n", with: "<br />")
        if status.emoji { html += " :herald:" }
        if status.link {
            html += " <a href=\"https://example.com/a/very/long/path?q=1&amp;r=2\" rel=\"nofollow noopener noreferrer\" target=\"_blank\">"
                + "<span class=\"invisible\">https://</span><span class=\"ellipsis\">example.com/a/very/lo</span>"
                + "<span class=\"invisible\">ng/path?q=1&amp;r=2</span></a>"
        }
        html += "</p><p>"
        html += status.tags.map { tag in
            "<a href=\"\(origin)/tags/\(tag)\" class=\"mention hashtag\" rel=\"tag\">#<span>\(tag)</span></a>"
        }.joined(separator: " ")
        return html + "</p>"
    }

    static func status(_ status: MastodonState.StoredStatus, media: [MastodonState.Media], origin: String) -> SandboxJSON {
        let id = String(status.id)
        return .object([
            ("id", .string(id)), ("created_at", .string(iso(status.createdAt))),
            ("in_reply_to_id", status.inReplyTo.map { .string($0) } ?? .null), ("in_reply_to_account_id", .null),
            ("sensitive", .bool(!status.spoiler.isEmpty)), ("spoiler_text", .string(status.spoiler)),
            ("visibility", .string(status.visibility)), ("language", status.language.map { .string($0) } ?? .null),
            ("uri", .string("\(origin)/users/\(status.author.username)/statuses/\(id)")),
            ("url", .string("\(origin)/@\(status.author.acct)/\(id)")),
            ("replies_count", .int(0)), ("reblogs_count", .int(0)), ("favourites_count", .int(0)),
            ("favourited", .bool(false)), ("reblogged", .bool(false)), ("muted", .bool(false)), ("bookmarked", .bool(false)),
            ("content", .string(content(status, origin: origin))), ("reblog", .null),
            ("application", status.posted ? .object([("name", .string("Herald")), ("website", .null)]) : .null),
            ("account", account(status.author, origin: origin)),
            ("media_attachments", .array(media.map { self.media($0, origin: origin) })),
            ("mentions", .array([])),
            ("tags", .array(status.tags.map { .object([("name", .string($0)), ("url", .string("\(origin)/tags/\($0)"))]) })),
            ("emojis", .array(status.emoji ? [.object([
                ("shortcode", .string("herald")), ("url", .string("\(origin)/emoji/herald.png")),
                ("static_url", .string("\(origin)/emoji/herald.png")), ("visible_in_picker", .bool(true)),
            ])] : [])),
            ("card", .null), ("poll", .null),
        ])
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    static func instance(v2: Bool, origin: String, settings: SandboxMastodonSettings) -> SandboxJSON {
        let domain = origin.replacingOccurrences(of: "http://", with: "").replacingOccurrences(of: "https://", with: "")
        let statuses: SandboxJSON = .object([
            ("max_characters", .int(Int64(settings.characterLimit))), ("max_media_attachments", .int(4)),
            ("characters_reserved_per_url", .int(23)),
        ])
        let media: SandboxJSON = .object([
            ("supported_mime_types", .array(["image/jpeg", "image/png", "image/gif", "image/webp", "video/mp4", "video/webm",
                                            "video/quicktime", "audio/mpeg", "audio/ogg", "audio/wave"].map { .string($0) })),
            ("image_size_limit", .int(16_777_216)), ("video_size_limit", .int(103_809_024)),
        ])
        if v2 {
            return .object([
                ("domain", .string(domain)), ("title", .string("Herald sandbox")), ("version", .string("4.3.0")),
                ("source_url", .string("https://github.com/mastodon/mastodon")), ("description", .string("An emulator for tests")),
                ("usage", .object([("users", .object([("active_month", .int(1))]))])),
                ("thumbnail", .object([("url", .string("\(origin)/thumbnail.png"))])), ("languages", .array([.string("en"), .string("ja")])),
                ("configuration", .object([("urls", .object([("streaming", .null)])), ("statuses", statuses), ("media_attachments", media)])),
                ("registrations", .object([("enabled", .bool(false)), ("approval_required", .bool(false)), ("message", .null)])),
                ("api_versions", .object([("mastodon", .int(2))])),
                ("contact", .object([("email", .string("sandbox@example.invalid")), ("account", .null)])), ("rules", .array([])),
            ])
        }
        return .object([
            ("uri", .string(domain)), ("title", .string("Herald sandbox")), ("short_description", .string("An emulator for tests")),
            ("description", .string("An emulator for tests")), ("email", .string("sandbox@example.invalid")),
            ("version", .string("4.3.0")), ("urls", .object([("streaming_api", .string("ws://\(domain)"))])),
            ("stats", .object([("user_count", .int(1)), ("status_count", .int(100)), ("domain_count", .int(2))])),
            ("thumbnail", .string("\(origin)/thumbnail.png")), ("languages", .array([.string("en"), .string("ja")])),
            ("registrations", .bool(false)), ("approval_required", .bool(false)), ("invites_enabled", .bool(false)),
            ("configuration", .object([("statuses", statuses), ("media_attachments", media)])),
            ("contact_account", .null), ("rules", .array([])),
        ])
    }
}
