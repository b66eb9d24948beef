import Foundation
import Herald
import HeraldIO
import HeraldLoaders
import HeraldSandbox
import HeraldServices
import HeraldTesting
import Synchronization
import HeraldSync
import HeraldTestSupport

/// A sandbox on test-controlled time, a bus that records every `loader.>` event, and clients
/// pointed at the sandbox through a transport that records each request's URL.
///
/// The sandbox's timeline and todos grow with its `now`, which is ``time``: fixed until a test
/// advances it, so two loads see the same timeline however slow the machine is.
struct LoaderHarness {
    let base: SandboxHarness
    let bus = EventBus()
    let recorder: EventRecorder
    let transport: RecordingTransport
    let stateDirectory: URL

    var sandbox: Sandbox { base.sandbox }
    var time: ManualDate { base.time }

    static func run<T>(_ configure: (inout SandboxConfiguration) -> Void = { _ in }, timeout: Duration = .seconds(120),
                       _ body: (LoaderHarness) async throws -> T) async throws -> T {
        let transport = RecordingTransport(SchemeRoutingTransport(defaultTimeout: timeout))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-loaders-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        return try await SandboxHarness.run(configure, time: ManualDate(Date(timeIntervalSince1970: 1_780_000_000)), transport: transport) { base in
            try await body(LoaderHarness(base: base, transport: transport, stateDirectory: directory))
        }
    }

    private init(base: SandboxHarness, transport: RecordingTransport, stateDirectory: URL) throws {
        self.base = base
        self.transport = transport
        self.stateDirectory = stateDirectory
        self.recorder = try EventRecorder(bus: bus, matching: "loader.>")
    }

    var store: LoaderStateStore { LoaderStateStore(directory: stateDirectory, io: BlockingIOThread(name: "test.state-io")) }

    /// Writes `text` as loader `id`'s state file.
    func writeState(_ text: String, for id: String) throws {
        try FileManager.default.createDirectory(at: stateDirectory, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: stateDirectory.appendingPathComponent("\(id).json"))
    }

    func twitter(timeout: Duration? = nil) -> TwitterClient { base.twitter(timeout: timeout) }
    func tiqav() -> TiqavClient { base.tiqav() }
    func baas() -> BaaSClient { base.baas() }
    func x(bearer: String? = nil) -> XClient { base.x(bearer: bearer) }
    func mastodon(token: String? = nil, transport: (any HTTPTransport)? = nil) -> MastodonClient { base.mastodon(token: token, transport: transport) }
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

