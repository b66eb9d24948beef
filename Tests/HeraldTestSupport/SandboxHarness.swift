import Foundation
import HeraldSandbox
import HeraldServices
import HeraldTesting

/// The one sandbox harness of the test targets: starts a sandbox for one test, builds the
/// service clients pointed at it, and stops it after the test (whether it threw or not).
///
/// The sandbox's timeline and todos grow with its `now`, which is ``time``: fixed until a test
/// advances it, so two loads see the same timeline however slow the machine is (unless
/// `sandboxFollowsTime` is false: then the sandbox runs on the real date). The clients sleep on
/// ``clock`` (upload polls): by default a ``ManualClock`` that moves to each deadline at once
/// and lists the sleeps.
public struct SandboxHarness: Sendable {
    /// The running sandbox.
    public let sandbox: Sandbox
    /// The sandbox's date.
    public let time: ManualDate
    /// What the clients sleep on.
    public let clock: ManualClock
    /// What the clients send through (by default ``SchemeRoutingTransport``, as the daemon).
    public let transport: any HTTPTransport

    /// Starts a sandbox configured by `configure`, runs `body` with the harness, stops it.
    public static func run<T>(
        _ configure: (inout SandboxConfiguration) -> Void = { _ in }, time: ManualDate = ManualDate(), sandboxFollowsTime: Bool = true,
        clock: ManualClock = ManualClock(advancesOnSleep: true),
        transport: any HTTPTransport = SchemeRoutingTransport(defaultTimeout: .seconds(120)),
        _ body: (SandboxHarness) async throws -> T
    ) async throws -> T {
        var configuration = sandboxFollowsTime ? SandboxConfiguration(now: { time.now }) : SandboxConfiguration()
        configure(&configuration)
        let sandbox = try await Sandbox.start(configuration)
        let harness = SandboxHarness(sandbox: sandbox, time: time, clock: clock, transport: transport)
        do {
            let result = try await body(harness)
            await sandbox.stop()
            return result
        } catch {
            await sandbox.stop()
            throw error
        }
    }

    /// The sandbox's OAuth 1.0a credentials.
    public var credentials: OAuthCredentials {
        let keys = sandbox.configuration.credentials
        return OAuthCredentials(consumerKey: keys.consumerKey, consumerSecret: keys.consumerSecret, token: keys.token, tokenSecret: keys.tokenSecret)
    }

    /// A Twitter API v1.1 client on the sandbox.
    public func twitter(credentials: OAuthCredentials? = nil, segmentSize: Int = TwitterClient.maxSegmentSize, timeout: Duration? = nil) -> TwitterClient {
        TwitterClient(
            baseURL: sandbox.baseURL, credentials: credentials ?? self.credentials, transport: transport, clock: clock,
            timeout: timeout, segmentSize: segmentSize)
    }

    /// An X API v2 client on the sandbox: OAuth 1.0a user context with the sandbox's
    /// credentials, or the given OAuth 2.0 user token.
    public func x(bearer: String? = nil, segmentSize: Int = TwitterClient.maxSegmentSize, maxStatusPolls: Int = 60) -> XClient {
        XClient(baseURL: sandbox.baseURL, authorization: bearer.map { .bearer($0) } ?? .oauth1(credentials), transport: transport,
                clock: clock, segmentSize: segmentSize, maxStatusPolls: maxStatusPolls)
    }

    /// A Mastodon client on the sandbox, on the sandbox's date unless `now` is given.
    public func mastodon(token: String? = nil, transport: (any HTTPTransport)? = nil, now: (@Sendable () -> Date)? = nil,
                         maxMediaPolls: Int = 60) -> MastodonClient {
        let time = self.time
        return MastodonClient(baseURL: sandbox.baseURL, token: token ?? sandbox.configuration.mastodon.token, transport: transport ?? self.transport,
                              clock: clock, now: now ?? { time.now }, maxMediaPolls: maxMediaPolls)
    }

    /// A Tiqav client on the sandbox.
    public func tiqav(timeout: Duration? = nil) -> TiqavClient {
        TiqavClient(baseURL: sandbox.baseURL, imageBaseURL: sandbox.imageBaseURL, transport: transport, timeout: timeout)
    }

    /// A BaaS client on the sandbox's bucket service.
    public func baas(applicationKey: String? = nil) -> BaaSClient {
        let configuration = sandbox.configuration
        return BaaSClient(configuration: BaaSConfiguration(
            endpoint: sandbox.baseURL, tenantID: configuration.baasTenant, applicationID: configuration.baasApplicationID,
            applicationKey: applicationKey ?? configuration.baasApplicationKey), transport: transport)
    }
}
