import Foundation

extension SandboxRouter {
    /// A scripted error on a Mastodon path: `{"error": "…"}`, and on 429 the `X-RateLimit-*`
    /// headers with a reset a second or so after the sandbox's `now` (ISO 8601, as Mastodon writes it).
    func mastodonScriptedError(_ status: Int, path: String, headers: [(name: String, value: String)]) -> SandboxResponse {
        var headers = headers
        let message: String
        switch status {
        case 401: message = "The access token is invalid"
        case 404: message = "Record not found"
        case 422: message = "Validation failed: scripted by the sandbox"
        case 429:
            message = "Too many requests"
            let reset = configuration.now().addingTimeInterval(1)
            headers += [("X-RateLimit-Limit", String(configuration.mastodon.rateLimit)), ("X-RateLimit-Remaining", "0"),
                        ("X-RateLimit-Reset", MastodonEncoding.iso(reset))]
        default: message = SandboxResponse.reasonPhrases[status] ?? "Error"
        }
        return MastodonEmulator.error(status, "\(message) (scripted by the sandbox)", headers: headers)
    }
}
