import HeraldServices
import Testing

/// The transports the clients can run on, for tests that hold each one to the
/// ``HTTPTransport`` contract.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// ``URLSessionTransport``, used for `https`.
    case urlSession
    /// ``SocketHTTPTransport``, used for plain `http`.
    case socket
    /// ``SchemeRoutingTransport``, what the daemon uses.
    case schemeRouting

    func make(defaultTimeout: Duration) -> any HTTPTransport {
        switch self {
        case .urlSession: URLSessionTransport(defaultTimeout: defaultTimeout)
        case .socket: SocketHTTPTransport(defaultTimeout: defaultTimeout)
        case .schemeRouting: SchemeRoutingTransport(defaultTimeout: defaultTimeout)
        }
    }

    var testDescription: String { rawValue }
}
