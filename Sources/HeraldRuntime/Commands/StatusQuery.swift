import Foundation
import HeraldServices
import HeraldStatus

/// `herald status`: asks a running daemon's status endpoint for `/status` and renders the
/// loaders (and the outbox) as a table for a terminal.
///
/// The endpoint is not trusted with the terminal: every string of its answer (a loader's last
/// error is a service's text) is escaped (``TerminalText/line(_:)``) before the table is made,
/// so the table's line breaks are its own.
public enum StatusQuery {
    /// Why the status could not be shown: a usage or configuration problem (exit 2), or a
    /// daemon that could not be reached or answered wrongly (exit 1).
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// One line saying what and where.
        public var description: String
        /// Whether the fault is in what was asked (exit 2) rather than at run time (exit 1).
        public var isUsage: Bool
    }

    /// The endpoint's base URL from `--url`: an `http` URL, a path after it ignored.
    ///
    /// - Throws: ``Failure`` (usage) for anything else.
    public static func baseURL(from text: String) throws(Failure) -> URL {
        guard let url = URL(string: text), url.scheme == "http", let host = url.host, !host.isEmpty,
              let base = URL(string: "http://\(host)\(url.port.map { ":\($0)" } ?? "")/")
        else { throw Failure(description: "--url: \"\(text)\" is not an http URL (http://127.0.0.1:8420)", isUsage: true) }
        return base
    }

    /// The endpoint's base URL from a configuration's `http` section (`0.0.0.0` is asked as
    /// `127.0.0.1`).
    ///
    /// - Throws: ``Failure`` (usage) when the configuration has no such section, or listens on
    ///   port 0 (the port is only known to the running daemon).
    public static func baseURL(for configuration: HeraldConfiguration, path: String) throws(Failure) -> URL {
        guard let http = configuration.http else {
            throw Failure(description: "\(path) has no \"http\" section, so the daemon serves no status; pass --url", isUsage: true)
        }
        guard http.port != 0 else {
            throw Failure(description: "\(path) listens on port 0 (any free port); pass the URL 'herald run' printed with --url", isUsage: true)
        }
        let host = http.host == "0.0.0.0" ? "127.0.0.1" : http.host
        guard let url = URL(string: "http://\(host):\(http.port)/") else {
            throw Failure(description: "\(path): http.listen is not usable", isUsage: true)
        }
        return url
    }

    /// Fetches `/status` from `base` and renders it.
    ///
    /// - Throws: ``Failure`` (runtime) when nothing answers, or the answer is not a status.
    public static func table(from base: URL, transport: any HTTPTransport = SocketHTTPTransport(defaultTimeout: .seconds(10))) async throws(Failure) -> String {
        let url = base.appendingPathComponent("status")
        let response: HTTPResponse
        do {
            response = try await transport.send(HTTPRequest(url: url, headers: ["Accept": "application/json"]))
        } catch {
            throw Failure(description: "cannot reach the status endpoint at \(base.absoluteString): \(error)", isUsage: false)
        }
        guard response.status == 200 else {
            throw Failure(description: "\(url.absoluteString) answered \(response.status)", isUsage: false)
        }
        do {
            return StatusTable.render(try StatusReport.decode(escapingStrings(in: response.body)), url: base)
        } catch {
            throw Failure(description: "\(url.absoluteString) did not answer a herald status: \(error)", isUsage: false)
        }
    }

    /// `body` with every string in it, keys included, passed through ``TerminalText/line(_:)``;
    /// as it is when it is not JSON (the decoder then says so).
    static func escapingStrings(in body: Data) -> Data {
        guard let value = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) else { return body }
        return (try? JSONSerialization.data(withJSONObject: escaping(value), options: [.fragmentsAllowed])) ?? body
    }

    private static func escaping(_ value: Any) -> Any {
        switch value {
        case let text as String:
            return TerminalText.line(text)
        case let array as [Any]:
            return array.map(escaping)
        case let object as [String: Any]:
            return Dictionary(object.map { (TerminalText.line($0.key), escaping($0.value)) }, uniquingKeysWith: { first, _ in first })
        default:
            return value
        }
    }
}
