import Foundation

/// The sandbox's own writers of X API v2 bodies: posts, users, problems (RFC 7807).
enum XEncoding {
    /// `2021-01-06T18:40:40.000Z`.
    static func formatDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
        return formatter.string(from: date)
    }

    /// A post with the default fields (`id`, `text`, `edit_history_tweet_ids`) and those asked
    /// for in `tweet.fields`.
    static func post(_ status: TwitterState.StoredStatus, fields: Set<String>) -> SandboxJSON {
        let id = String(status.id)
        var pairs: [(String, SandboxJSON)] = [
            ("id", .string(id)), ("text", .string(status.text)), ("edit_history_tweet_ids", .array([.string(id)])),
        ]
        if fields.contains("author_id") { pairs.append(("author_id", .string(String(status.author.id)))) }
        if fields.contains("created_at") { pairs.append(("created_at", .string(formatDate(status.createdAt)))) }
        if fields.contains("referenced_tweets"), let reply = status.inReplyTo {
            pairs.append(("referenced_tweets", .array([.object([("type", .string("replied_to")), ("id", .string(String(reply)))])])))
        }
        if fields.contains("attachments"), !status.mediaIDs.isEmpty {
            pairs.append(("attachments", .object([("media_keys", .array(status.mediaIDs.map { .string("7_" + $0) }))])))
        }
        return .object(pairs)
    }

    static func user(_ person: TimelineFixtures.Person) -> SandboxJSON {
        .object([("id", .string(String(person.id))), ("name", .string(person.name)), ("username", .string(person.screenName))])
    }

    /// A problem as the whole body: `{"title","detail","type","status"}`.
    static func problem(_ status: Int, title: String, detail: String, type: String = "about:blank",
                        headers: [(name: String, value: String)] = []) -> SandboxResponse {
        var response = SandboxResponse.json(status, .object([
            ("title", .string(title)), ("detail", .string(detail)), ("type", .string(type)), ("status", .int(Int64(status))),
        ]), headers: headers)
        response.headers = response.headers.map { $0.name == "Content-Type" ? ($0.name, "application/problem+json") : $0 }
        return response
    }

    /// 400 for a parameter out of its range, in the shape of the service's `invalid-request` problem.
    static func invalidRequest(_ message: String, parameter: String, value: String) -> SandboxResponse {
        .json(400, .object([
            ("errors", .array([.object([
                ("parameters", .object([(parameter, .array([.string(value)]))])), ("message", .string(message)),
            ])])),
            ("title", .string("Invalid Request")), ("detail", .string("One or more parameters to your request was invalid.")),
            ("type", .string("https://api.twitter.com/2/problems/invalid-request")),
        ]))
    }

    /// A 200 that reports a missing resource in `errors` and holds no `data`.
    static func notFound(_ value: String, parameter: String, resource: String) -> SandboxResponse {
        .json(200, .object([("errors", .array([.object([
            ("value", .string(value)), ("detail", .string("Could not find \(resource) with \(parameter): [\(value)].")),
            ("title", .string("Not Found Error")), ("resource_type", .string(resource)), ("parameter", .string(parameter)),
            ("resource_id", .string(value)), ("type", .string("https://api.twitter.com/2/problems/resource-not-found")),
        ])]))]))
    }

    /// The status a scripted or injected error carries on a `/2/` path.
    static func scripted(_ status: Int, note: String, headers: [(name: String, value: String)]) -> SandboxResponse {
        let title = SandboxResponse.reasonPhrases[status] ?? "Error"
        let type = status == 429 ? "about:blank" : "about:blank"
        return problem(status, title: title, detail: "\(title) \(note)", type: type, headers: headers)
    }
}
