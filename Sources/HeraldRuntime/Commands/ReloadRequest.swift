import Foundation
import HeraldServices
import HeraldStatus

/// `herald reload`: asks a running daemon to reload its configuration (`POST /-/reload` on its
/// status endpoint) and returns what it answered.
public enum ReloadRequest {
    /// Sends the request to the endpoint at `base` and waits for the reload's result.
    ///
    /// - Throws: ``StatusQuery/Failure`` (runtime) when nothing answers or the answer is not a
    ///   reload's result.
    public static func send(to base: URL, transport: any HTTPTransport = SocketHTTPTransport(defaultTimeout: .seconds(300)))
        async throws(StatusQuery.Failure) -> StatusReloadResult {
        let url = base.appendingPathComponent("-").appendingPathComponent("reload")
        let response: HTTPResponse
        do {
            response = try await transport.send(HTTPRequest(method: "POST", url: url, headers: ["Accept": "application/json"], body: Data()))
        } catch {
            throw StatusQuery.Failure(description: "cannot reach the status endpoint at \(base.absoluteString): \(error)", isUsage: false)
        }
        if let result = try? StatusReloadResult.decode(StatusQuery.escapingStrings(in: response.body)) { return result }
        let reason = (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["error"] as? String
        throw StatusQuery.Failure(description: "\(url.absoluteString) answered \(response.status)" + (reason.map { ": \(TerminalText.line($0))" } ?? ""),
                                  isUsage: false)
    }
}
