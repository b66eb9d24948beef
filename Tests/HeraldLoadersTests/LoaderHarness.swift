import Foundation
import Herald
import HeraldIO
import HeraldLoaders
import HeraldSandbox
import HeraldServices
import Synchronization
import HeraldSync
import HeraldTestSupport

/// A sandbox on test-controlled time, a bus that records every `loader.>` event, and clients
/// pointed at the sandbox through a transport that records each request's URL.
///
/// The sandbox's timeline and todos grow with its `now`, which is ``time``: fixed until a test
/// advances it, so two loads see the same timeline however slow the machine is.
struct LoaderHarness {
    let sandbox: Sandbox
    let bus = EventBus()
    let recorder: EventRecorder
    let transport: RecordingTransport
    let stateDirectory: URL
    let time: TestTime

    static func run<T>(_ configure: (inout SandboxConfiguration) -> Void = { _ in }, timeout: Duration = .seconds(120),
                       _ body: (LoaderHarness) async throws -> T) async throws -> T {
        let time = TestTime()
        var configuration = SandboxConfiguration(now: { time.now })
        configure(&configuration)
        let sandbox = try await Sandbox.start(configuration)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-loaders-\(UUID().uuidString)")
        let harness = try LoaderHarness(sandbox: sandbox, transport: RecordingTransport(SchemeRoutingTransport(defaultTimeout: timeout)),
                                        stateDirectory: directory, time: time)
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

    private init(sandbox: Sandbox, transport: RecordingTransport, stateDirectory: URL, time: TestTime) throws {
        self.sandbox = sandbox
        self.transport = transport
        self.stateDirectory = stateDirectory
        self.time = time
        self.recorder = try EventRecorder(bus: bus)
    }

    var store: LoaderStateStore { LoaderStateStore(directory: stateDirectory, io: BlockingIOThread(name: "test.state-io")) }

    /// Writes `text` as loader `id`'s state file.
    func writeState(_ text: String, for id: String) throws {
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: stateDirectory.appendingPathComponent("\(id).json"))
    }

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
    private let storage = SyncLock<[Envelope<any Event>]>([])
    private let subscription = SyncLock<Subscription?>(nil)

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

/// The sandbox's time in a test: a fixed date that moves only by ``advance(by:)``.
final class TestTime: Sendable {
    private let date = SyncLock(Date(timeIntervalSince1970: 1_780_000_000))

    var now: Date { date.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        date.withLock { $0 += seconds }
    }
}

/// Forwards to a transport and records each request's URL, in order; responses can be held
/// at a gate, so a load stays in flight until the test lets it finish.
final class RecordingTransport: HTTPTransport {
    private let base: any HTTPTransport
    private let urls = SyncLock<[URL]>([])
    private let gate = SyncLock<Gate?>(nil)

    init(_ base: any HTTPTransport) {
        self.base = base
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        urls.withLock { $0.append(request.url) }
        let response = try await base.send(request)
        if let gate = gate.withLock({ $0 }) { await gate.wait() }
        return response
    }

    /// From now on, responses wait until the returned gate opens.
    func holdResponses() -> Gate {
        let held = Gate()
        gate.withLock { $0 = held }
        return held
    }

    /// The recorded requests' paths, in order.
    var paths: [String] { urls.withLock { $0 }.map(\.path) }

    /// The recorded requests' query items named `name` (nil where a request has none).
    func queryValues(_ name: String) -> [String?] {
        urls.withLock { $0 }.map { url in
            URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
        }
    }
}

