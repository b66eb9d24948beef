import Foundation
import HeraldHTTP

/// A loopback emulator of the three services Herald talks to, on one port of 127.0.0.1.
///
/// Paths are the services' real ones, so a client's base URL is simply ``baseURL``:
/// - Twitter-style: `/1.1/statuses/{home,user}_timeline.{json,xml}`,
///   `/1.1/statuses/update.json`, `/1.1/media/upload.json` (OAuth 1.0a checked on each);
/// - Tiqav: `/search/random.json`, `/search.json?q=`, images under `/img/`;
/// - NEC BaaS: `/1/{tenant}/objects/{bucket}[/{id}]`;
/// - Mastodon: `/api/v1/…` and `/api/v2/…` (instance, timelines, statuses, media; bearer token);
/// - feeds that grow on its clock: `/feeds/news.rss`, `/feeds/news.atom`, `/feeds/odd.xml`
///   (see ``SandboxConfiguration/feedInterval``), and a webhook receiver that verifies Standard
///   Webhooks signatures, `POST /_sandbox/webhooks` (`GET` lists the deliveries, `DELETE` clears);
/// - the sandbox itself: `GET /_sandbox/posts`, `GET /_sandbox/config`, `GET /_sandbox/health`,
///   `GET /_sandbox/objects/{bucket}`, and `GET`/`POST`/`DELETE /_sandbox/faults` (scripted
///   faults, see ``script(path:method:_:)``).
///
/// ```swift
/// let sandbox = try await Sandbox.start(SandboxConfiguration())
/// defer { Task { await sandbox.stop() } }
/// print(sandbox.baseURL)
/// ```
public final class Sandbox: Sendable {
    /// The configuration it runs with.
    public let configuration: SandboxConfiguration
    /// The port it listens on (the chosen one when started with port 0).
    public let port: Int
    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL
    /// Where Tiqav images are served: `{baseURL}/img`.
    public var imageBaseURL: URL { baseURL.appendingPathComponent("img") }

    let server: HTTPServer
    private let twitter: TwitterEmulator
    let baas: BaaSEmulator
    let mastodon: MastodonEmulator
    let webhooks: WebhookReceiver
    let faultScript: FaultScript

    private init(configuration: SandboxConfiguration, server: HTTPServer, twitter: TwitterEmulator, baas: BaaSEmulator,
                 mastodon: MastodonEmulator, webhooks: WebhookReceiver, faultScript: FaultScript) {
        self.webhooks = webhooks
        self.configuration = configuration
        self.server = server
        self.twitter = twitter
        self.baas = baas
        self.mastodon = mastodon
        self.faultScript = faultScript
        self.port = server.port
        self.baseURL = URL(string: "http://127.0.0.1:\(server.port)") ?? URL(fileURLWithPath: "/")
    }

    /// Binds the port and starts serving, within `limits` (connections, body bytes held,
    /// head and idle time).
    ///
    /// - Throws: ``SandboxError`` when the socket cannot be opened or bound. `limits` is
    ///   HeraldHTTP's ``HTTPServerLimits``.
    public static func start(
        _ configuration: SandboxConfiguration = SandboxConfiguration(), limits: HTTPServerLimits = HTTPServerLimits()
    ) async throws -> Sandbox {
        let twitter = TwitterEmulator(configuration: configuration)
        let baas = BaaSEmulator(configuration: configuration)
        let mastodon = MastodonEmulator(configuration: configuration)
        let webhooks = WebhookReceiver(configuration: configuration)
        let script = FaultScript()
        let router = SandboxRouter(
            twitter: twitter, tiqav: TiqavEmulator(), baas: baas, mastodon: mastodon,
            feeds: FeedEmulator(configuration: configuration), webhooks: webhooks,
            faults: FaultInjector(faults: configuration.faults), script: script, configuration: configuration)
        let server: HTTPServer
        do {
            server = try HTTPServer(name: "sandbox", port: configuration.port, limits: limits, handler: HTTPClosureHandler { request in
                router.route(request)
            })
        } catch {
            throw SandboxError(operation: error.operation, code: error.code)
        }
        server.start()
        return Sandbox(configuration: configuration, server: server, twitter: twitter, baas: baas, mastodon: mastodon, webhooks: webhooks,
                       faultScript: script)
    }

    /// Stops accepting, closes open connections and waits until every server thread ended.
    /// Calling it again does nothing more.
    public func stop() async {
        await server.stop()
    }

    /// Serves until the calling task is cancelled, then stops: the shape of a long-running
    /// service, for a service group or `herald sandbox`.
    public func run() async {
        let (cancelled, continuation) = AsyncStream<Void>.makeStream()
        await withTaskCancellationHandler {
            for await _ in cancelled {}
        } onCancel: {
            continuation.finish()
        }
        await stop()
    }

    /// Closes the keep-alive connections waiting for their next request (clients reconnect on
    /// their next request). Scripting a drop does this itself.
    func closeIdleConnections() {
        server.closeIdleConnections()
    }

    /// How many requests have been received so far (control paths included).
    public var requestsReceived: Int {
        server.requestsReceived
    }

    /// Returns once at least `count` requests have been received (control paths included),
    /// or as soon as the sandbox stops or the calling task is cancelled, so a caller can
    /// await a request reaching the server instead of sleeping. Check ``requestsReceived``
    /// afterwards to tell which happened.
    public func waitForRequests(_ count: Int) async {
        await server.waitForRequests(count)
    }

    /// The statuses posted so far, oldest first.
    public func posts() -> [SandboxPost] {
        twitter.posts()
    }

    /// The statuses posted to the Mastodon emulator so far, oldest first.
    public func mastodonPosts() -> [SandboxMastodonPost] {
        mastodon.posts()
    }

    /// The deliveries the webhook receiver (`/_sandbox/webhooks`) got so far, oldest first.
    public func webhookDeliveries() -> [SandboxWebhookDelivery] {
        webhooks.deliveries()
    }
}
