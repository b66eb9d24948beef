import Foundation
import Herald
import HeraldLoaders
import HeraldSandbox
import HeraldServices
import Synchronization

/// A sandbox, a bus that records every `loader.>` event, and clients pointed at the sandbox.
struct LoaderHarness {
    let sandbox: Sandbox
    let bus = EventBus()
    let recorder: EventRecorder
    let transport: URLSessionTransport
    let stateDirectory: URL

    static func run<T>(_ configure: (inout SandboxConfiguration) -> Void = { _ in }, timeout: Duration = .seconds(10),
                       _ body: (LoaderHarness) async throws -> T) async throws -> T {
        var configuration = SandboxConfiguration()
        configure(&configuration)
        let sandbox = try await Sandbox.start(configuration)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-loaders-\(UUID().uuidString)")
        let harness = try LoaderHarness(sandbox: sandbox, transport: URLSessionTransport(defaultTimeout: timeout),
                                        stateDirectory: directory)
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let result = try await body(harness)
            await sandbox.stop()
            return result
        } catch {
            await sandbox.stop()
            throw error
        }
    }

    private init(sandbox: Sandbox, transport: URLSessionTransport, stateDirectory: URL) throws {
        self.sandbox = sandbox
        self.transport = transport
        self.stateDirectory = stateDirectory
        self.recorder = try EventRecorder(bus: bus)
    }

    var store: LoaderStateStore { LoaderStateStore(directory: stateDirectory) }

    func twitter(timeout: Duration? = nil) -> TwitterClient {
        let keys = sandbox.configuration.credentials
        return TwitterClient(
            baseURL: sandbox.baseURL,
            credentials: OAuthCredentials(consumerKey: keys.consumerKey, consumerSecret: keys.consumerSecret,
                                          token: keys.token, tokenSecret: keys.tokenSecret),
            transport: transport, timeout: timeout)
    }

    func tiqav() -> TiqavClient {
        TiqavClient(baseURL: sandbox.baseURL, imageBaseURL: sandbox.imageBaseURL, transport: transport)
    }

    func baas() -> BaaSClient {
        let configuration = sandbox.configuration
        return BaaSClient(configuration: BaaSConfiguration(
            endpoint: sandbox.baseURL, tenantID: configuration.baasTenant, applicationID: configuration.baasApplicationID,
            applicationKey: configuration.baasApplicationKey), transport: transport)
    }
}

/// Records every `loader.>` envelope, inline, in publication order.
final class EventRecorder: Sendable {
    private let storage = Mutex<[Envelope<any Event>]>([])
    private let subscription = Mutex<Subscription?>(nil)

    init(bus: EventBus) throws {
        let token = try bus.subscribe(matching: "loader.>") { [weak self] envelope in
            self?.storage.withLock { $0.append(envelope) }
        }
        subscription.withLock { $0 = token }
    }

    var topics: [String] { storage.withLock { $0.map(\.topic.name) } }
    var envelopes: [Envelope<any Event>] { storage.withLock { $0 } }

    func events<E: Event>(_ type: E.Type) -> [E] { envelopes.compactMap { $0.event as? E } }
}
