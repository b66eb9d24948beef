import Foundation
import HeraldSandbox
import HeraldServices
import HeraldTestSupport
import HeraldTesting

/// Starts a sandbox for one test and builds clients pointed at it.
struct SandboxHarness {
    let sandbox: Sandbox
    let time: ManualDate
    let clock = ManualClock(advancesOnSleep: true)
    /// By default what the daemon uses, ``SchemeRoutingTransport``: the sandbox's plain-http
    /// requests go through ``SocketHTTPTransport``.
    let transport: any HTTPTransport

    static func run<T>(
        _ configure: (inout SandboxConfiguration) -> Void = { _ in }, timeout: Duration = .seconds(120),
        transport kind: TransportKind = .schemeRouting, _ body: (SandboxHarness) async throws -> T
    ) async throws -> T {
        let time = ManualDate()
        var configuration = SandboxConfiguration(now: { time.now })
        configure(&configuration)
        let sandbox = try await Sandbox.start(configuration)
        let harness = SandboxHarness(sandbox: sandbox, time: time, transport: kind.make(defaultTimeout: timeout))
        do {
            let result = try await body(harness)
            await sandbox.stop()
            return result
        } catch {
            await sandbox.stop()
            throw error
        }
    }

    var credentials: OAuthCredentials {
        let sandboxCredentials = sandbox.configuration.credentials
        return OAuthCredentials(
            consumerKey: sandboxCredentials.consumerKey, consumerSecret: sandboxCredentials.consumerSecret,
            token: sandboxCredentials.token, tokenSecret: sandboxCredentials.tokenSecret)
    }

    func twitter(credentials: OAuthCredentials? = nil, segmentSize: Int = TwitterClient.maxSegmentSize, timeout: Duration? = nil) -> TwitterClient {
        TwitterClient(
            baseURL: sandbox.baseURL, credentials: credentials ?? self.credentials, transport: transport, clock: clock,
            timeout: timeout, segmentSize: segmentSize)
    }

    func tiqav(timeout: Duration? = nil) -> TiqavClient {
        TiqavClient(baseURL: sandbox.baseURL, imageBaseURL: sandbox.imageBaseURL, transport: transport, timeout: timeout)
    }

    func baas(applicationKey: String? = nil) -> BaaSClient {
        let configuration = sandbox.configuration
        return BaaSClient(configuration: BaaSConfiguration(
            endpoint: sandbox.baseURL, tenantID: configuration.baasTenant, applicationID: configuration.baasApplicationID,
            applicationKey: applicationKey ?? configuration.baasApplicationKey), transport: transport)
    }
}

/// Runs `body` and returns the ``ServiceError`` it throws, or nil when it does not throw one.
func serviceError<T>(_ body: () async throws -> T) async -> ServiceError? {
    do {
        _ = try await body()
        return nil
    } catch let error as ServiceError {
        return error
    } catch {
        return nil
    }
}
