import Foundation

/// The sandbox's own writers of the Twitter wire formats (JSON and XML).
enum TwitterEncoding {
    static func formatDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE MMM dd HH:mm:ss Z yyyy"
        return formatter.string(from: date)
    }

    /// One status object; with `trimUser`, the user is only `{id, id_str}`.
    static func json(_ status: TwitterState.StoredStatus, trimUser: Bool = false) -> SandboxJSON {
        let author = status.author
        let user: SandboxJSON = trimUser
            ? .object([("id", .uint(author.id)), ("id_str", .string(String(author.id)))])
            : .object([
                ("id", .uint(author.id)), ("id_str", .string(String(author.id))),
                ("name", .string(author.name)), ("screen_name", .string(author.screenName)),
            ])
        var pairs: [(String, SandboxJSON)] = [
            ("created_at", .string(formatDate(status.createdAt))),
            ("id", .uint(status.id)),
            ("id_str", .string(String(status.id))),
            ("text", .string(status.text)),
            ("source", .string("<a href=\"http://127.0.0.1\" rel=\"nofollow\">Herald Sandbox</a>")),
            ("truncated", .bool(false)),
            ("in_reply_to_status_id", status.inReplyTo.map { .uint($0) } ?? .null),
            ("in_reply_to_status_id_str", status.inReplyTo.map { .string(String($0)) } ?? .null),
            ("user", user),
        ]
        if !status.mediaIDs.isEmpty {
            pairs.append(("entities", .object([("media", .array(status.mediaIDs.map {
                .object([("id_str", .string($0)), ("type", .string("video"))])
            }))])))
        }
        return .object(pairs)
    }

    static func xml(_ statuses: [TwitterState.StoredStatus], trimUser: Bool = false) -> String {
        var output = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<statuses type=\"array\">\n"
        for status in statuses {
            // `trim_user` leaves only the author's id, as in JSON.
            let userDetails = trimUser ? "" : """

                    <name>\(escape(status.author.name))</name>
                    <screen_name>\(escape(status.author.screenName))</screen_name>
                    <location>Loopback</location>
                    <protected>false</protected>
                """
            output += """
                <status>
                  <created_at>\(formatDate(status.createdAt))</created_at>
                  <id>\(status.id)</id>
                  <text>\(escape(status.text))</text>
                  <source>\(escape("<a href=\"http://127.0.0.1\">Herald Sandbox</a>"))</source>
                  <truncated>false</truncated>
                  <in_reply_to_status_id>\(status.inReplyTo.map(String.init) ?? "")</in_reply_to_status_id>
                  <favorited>false</favorited>
                  <user>
                    <id>\(status.author.id)</id>\(userDetails)
                  </user>
                </status>

                """
        }
        return output + "</statuses>\n"
    }

    static func escape(_ text: String) -> String {
        var output = ""
        for character in text {
            switch character {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "'": output += "&apos;"
            default: output.append(character)
            }
        }
        return output
    }
}
