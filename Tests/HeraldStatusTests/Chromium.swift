import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HeraldSync
import HeraldTestSupport

/// Headless Chromium driven over the DevTools protocol: started with
/// `--remote-debugging-port=0`, its page target reached through a ``WebSocketClient``.
///
/// `--dump-dom` returns before the page's live content arrives and `--virtual-time-budget`
/// never ends while an SSE stream is open, so the test asks the page itself: ``evaluate(_:)``
/// runs an expression (awaiting its promise) and returns its value as JSON.
final class Chromium: Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static let executable = Tool.find(["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"])

    private struct State {
        var nextID = 0
        var pending: [Int: CheckedContinuation<Data, any Error>] = [:]
        var closed = false
    }

    private let child: ChildProcess
    private let profile: URL
    private let socket: SyncLock<WebSocketClient?> = SyncLock(nil)
    private let state = SyncLock(State())

    private init(child: ChildProcess, profile: URL) {
        self.child = child
        self.profile = profile
    }

    /// Starts Chromium and connects to its blank page.
    static func launch() async throws -> Chromium {
        guard let executable else { throw Failure(description: "chromium is not installed (apt-get install chromium)") }
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("herald-chromium-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        let arguments = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                         "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                         "--remote-debugging-port=0", "--remote-allow-origins=*", "--user-data-dir=\(profile.path)",
                         "--window-size=1280,1000", "about:blank"]
        let child = try ChildProcess(URL(fileURLWithPath: executable), arguments)
        // Chromium says where DevTools listens on its standard error (the wait ends early if
        // it exits first).
        _ = await child.waitForStandardError { Self.devToolsURL(in: $0) != nil }
        let browserURL = Self.devToolsURL(in: child.stderr)
        let chromium = Chromium(child: child, profile: profile)
        guard let browserURL, let port = URL(string: browserURL)?.port else {
            await chromium.quit()
            throw Failure(description: "chromium did not open DevTools: \(child.stderr)")
        }
        let targets = try await Curl.run(["http://127.0.0.1:\(port)/json/list"]).stdout
        let list = try JSONSerialization.jsonObject(with: Data(targets.utf8)) as? [[String: Any]] ?? []
        guard let page = list.first(where: { $0["type"] as? String == "page" }),
              let pageURL = (page["webSocketDebuggerUrl"] as? String).flatMap(URL.init(string:))
        else {
            await chromium.quit()
            throw Failure(description: "no page target in \(targets)")
        }
        let client = try await WebSocketClient.connect(port: port, path: pageURL.path, onMessage: { [weak chromium] text in
            chromium?.received(text)
        }, onClose: { [weak chromium] in chromium?.closed() })
        chromium.socket.withLock { $0 = client }
        return chromium
    }

    private static func devToolsURL(in text: String) -> String? {
        guard let range = text.range(of: "DevTools listening on ") else { return nil }
        let rest = text[range.upperBound...]
        guard let end = rest.firstIndex(of: "\n") else { return nil }
        return String(rest[..<end]).trimmingCharacters(in: .whitespaces)
    }

    /// Sends a DevTools command; its `result` object as JSON.
    func call(_ method: String, _ params: [String: any Sendable] = [:]) async throws -> Data {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        let message = try JSONSerialization.data(withJSONObject: ["id": id, "method": method, "params": params] as [String: Any])
        guard let socket = socket.withLock({ $0 }) else { throw Failure(description: "not connected") }
        return try await withCheckedThrowingContinuation { continuation in
            let closed = state.withLock { state -> Bool in
                if state.closed { return true }
                state.pending[id] = continuation
                return false
            }
            if closed { continuation.resume(throwing: Failure(description: "DevTools closed")) }
            Task { await socket.send(String(decoding: message, as: UTF8.self)) }
        }
    }

    /// Evaluates `expression` in the page, awaiting a promise it returns; its value as JSON.
    func evaluate(_ expression: String) async throws -> Any? {
        let data = try await call("Runtime.evaluate", ["expression": expression, "awaitPromise": true, "returnByValue": true])
        let result = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        if let exception = result?["exceptionDetails"] { throw Failure(description: "the page threw: \(exception)") }
        return (result?["result"] as? [String: Any])?["value"]
    }

    /// Resolves once `condition` (a JavaScript expression) is true in the page, checked again on
    /// every change of the document: no timers.
    func waitUntil(_ condition: String) async throws {
        let script = """
            new Promise(resolve => {
              const holds = () => { try { return !!(\(condition)); } catch (e) { return false; } };
              if (holds()) return resolve(true);
              const observer = new MutationObserver(() => { if (holds()) { observer.disconnect(); resolve(true); } });
              observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
            })
            """
        _ = try await evaluate(script)
    }

    /// Ends the browser (SIGTERM to the process this test started) and waits for it to exit.
    func quit() async {
        socket.withLock { $0 }?.shutdown()
        child.signal(SIGTERM)
        _ = await child.finish()
        try? FileManager.default.removeItem(at: profile)
    }

    private func received(_ text: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
              let id = object["id"] as? Int else { return }  // an event, not an answer
        let waiter = state.withLock { $0.pending.removeValue(forKey: id) }
        if let error = object["error"] {
            waiter?.resume(throwing: Failure(description: "\(error)"))
        } else {
            let result = (try? JSONSerialization.data(withJSONObject: object["result"] ?? [:])) ?? Data("{}".utf8)
            waiter?.resume(returning: result)
        }
    }

    private func closed() {
        let waiters = state.withLock { state in
            state.closed = true
            defer { state.pending = [:] }
            return Array(state.pending.values)
        }
        waiters.forEach { $0.resume(throwing: Failure(description: "DevTools closed")) }
    }
}
