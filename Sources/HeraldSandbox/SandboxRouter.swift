import Foundation

/// Sends each request to its emulator and applies the scripted, then the random, faults to
/// service answers.
struct SandboxRouter: Sendable {
    let twitter: TwitterEmulator
    let tiqav: TiqavEmulator
    let baas: BaaSEmulator
    let mastodon: MastodonEmulator
    let feeds: FeedEmulator
    let webhooks: WebhookReceiver
    let faults: FaultInjector
    let script: FaultScript
    let configuration: SandboxConfiguration

    func route(_ request: SandboxRequest) -> SandboxResponse {
        // The webhook receiver stands for a service: deliveries meet faults like any request.
        let isDelivery = request.path == "/_sandbox/webhooks" && request.method == "POST"
        if request.path.hasPrefix("/_sandbox/") && !isDelivery { return control(request) }
        var response = routeService(request)
        // While a drop is scripted, no connection is kept alive, so the drop always meets a
        // fresh connection and a client cannot silently resend the request (see
        // HTTPServer.closeIdleConnections()).
        if script.hasPendingDrop { response.closesConnection = true }
        return response
    }

    private func routeService(_ request: SandboxRequest) -> SandboxResponse {
        // Drawn even when a script decides, so scripting one request does not shift the random
        // faults of the others.
        let plan = faults.plan()
        if let scripted = script.next(for: request) {
            return respond(to: request, scripted: scripted)
        }
        if plan.serverError {
            // A 503 says when to come back, as RFC 9110 allows, so clients meet `Retry-After`.
            let headers: [(name: String, value: String)] = plan.errorStatus == 503 ? [("Retry-After", "2")] : []
            let response = request.path.hasPrefix("/2/")
                ? XEncoding.scripted(plan.errorStatus, note: "(injected by the sandbox)", headers: headers)
                : MastodonEmulator.handles(request.path)
                ? MastodonEmulator.error(plan.errorStatus, "Internal error (injected by the sandbox).", headers: headers)
                : SandboxResponse.twitterError(plan.errorStatus, code: 131, "Internal error (injected by the sandbox).", headers: headers)
            return faults.apply(FaultInjector.Plan(drop: plan.drop), to: response)
        }
        return faults.apply(plan, to: serve(request))
    }

    /// The emulator's own answer, side effects included.
    func serve(_ request: SandboxRequest) -> SandboxResponse {
        let path = request.path
        if path.hasPrefix("/1.1/") {
            return twitter.handle(request)
        } else if path.hasPrefix("/2/") {
            return XEmulator(twitter: twitter).handle(request)
        } else if path.hasPrefix("/search") || path.hasPrefix("/img/") {
            return tiqav.handle(request)
        } else if path.hasPrefix("/1/") {
            return baas.handle(request)
        } else if MastodonEmulator.handles(path) {
            return mastodon.handle(request)
        } else if FeedEmulator.handles(path) {
            return feeds.handle(request)
        } else if path == "/_sandbox/webhooks" {
            return webhooks.receive(request)
        }
        return .twitterError(404, code: 34, "Sorry, that page does not exist.")
    }

    private func control(_ request: SandboxRequest) -> SandboxResponse {
        switch request.path {
        case "/_sandbox/faults":
            return faultsControl(request)
        case let path where path.hasPrefix("/_sandbox/objects/"):
            return objectsControl(String(path.dropFirst("/_sandbox/objects/".count)))
        case "/_sandbox/mastodon/posts":
            let posts = mastodon.posts().map { post -> SandboxJSON in
                .object([
                    ("id", .string(post.id)), ("text", .string(post.text)), ("visibility", .string(post.visibility)),
                    ("spoiler_text", .string(post.spoilerText)), ("language", post.language.map { .string($0) } ?? .null),
                    ("media_ids", .array(post.mediaIDs.map { .string($0) })),
                    ("media_descriptions", .array(post.mediaDescriptions.map { .string($0) })),
                    ("idempotency_key", post.idempotencyKey.map { .string($0) } ?? .null),
                    ("in_reply_to_id", post.inReplyToID.map { .string($0) } ?? .null),
                ])
            }
            return .json(200, .object([("posts", .array(posts))]))
        case "/_sandbox/webhooks":
            return request.method == "DELETE" ? webhooks.clear() : webhooks.list()
        case "/_sandbox/health":
            return .json(200, .object([("status", .string("ok"))]))
        case "/_sandbox/posts":
            let posts = twitter.posts().map { post -> SandboxJSON in
                .object([
                    ("id_str", .string(post.id)), ("text", .string(post.text)),
                    ("in_reply_to_status_id_str", post.inReplyToStatusID.map { .string($0) } ?? .null),
                    ("media_ids", .array(post.mediaIDs.map { .string($0) })),
                ])
            }
            return .json(200, .object([("posts", .array(posts))]))
        case "/_sandbox/config":
            // Anyone on this machine can read this: keys, tokens and secrets are shown only when
            // they are the sandbox's own published defaults, never ones a user configured (they
            // may come from the environment, and may be real).
            let credentials = configuration.credentials
            let standard = SandboxCredentials.standard
            func secret(_ value: String, default known: String) -> SandboxJSON {
                .string(value == known ? value : "(configured, not shown)")
            }
            return .json(200, .object([
                ("twitter", .object([
                    ("consumer_key", secret(credentials.consumerKey, default: standard.consumerKey)),
                    ("consumer_secret", secret(credentials.consumerSecret, default: standard.consumerSecret)),
                    ("access_token", secret(credentials.token, default: standard.token)),
                    ("access_token_secret", secret(credentials.tokenSecret, default: standard.tokenSecret)),
                    ("screen_name", .string(configuration.screenName)),
                    ("oauth2_user_token", secret(configuration.oauth2UserToken, default: SandboxConfiguration().oauth2UserToken)),
                ])),
                ("baas", .object([
                    ("tenant", .string(configuration.baasTenant)), ("application_id", .string(configuration.baasApplicationID)),
                    ("application_key", secret(configuration.baasApplicationKey, default: "sandbox-app-key")),
                ])),
            ]))
        default:
            return .json(404, .object([("error", .string("unknown sandbox path"))]))
        }
    }
}
