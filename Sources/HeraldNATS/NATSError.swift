/// Everything the NATS client itself can fail with (JetStream's own API errors are
/// ``JetStreamError``).
///
/// A struct over a ``Kind`` so details can be added without breaking callers; compare errors by
/// ``kind``. The ``message`` names what failed and where (the server, the subject, the byte
/// offset of a bad frame); it never contains credentials.
public struct NATSError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Kind: String, Sendable, Hashable {
        /// A server address or an option could not be used as given.
        case invalidConfiguration
        /// No server of the list accepted a connection (the message lists each server's reason).
        case connectionFailed
        /// The operation needs a connection and the client is between connections.
        case notConnected
        /// The connection is closed (by ``NATSConnection/close()`` or after the last reconnect attempt).
        case closed
        /// The server sent bytes that are not the NATS protocol (a parse error; the connection is dropped).
        case protocolViolation
        /// The server answered `-ERR` (the message carries the server's text).
        case serverError
        /// A subject, queue group or reply subject that cannot be sent on the wire.
        case invalidSubject
        /// A payload (with its headers) larger than the server's `max_payload` (or the client's
        /// cap), to be sent or received as a reply.
        case payloadTooLarge
        /// The publish was refused because the buffer kept while disconnected is full.
        case bufferFull
        /// No reply arrived before the deadline.
        case timeout
        /// A request reached no subscriber (the server's 503 status).
        case noResponders
        /// The waiting task was cancelled.
        case cancelled
        /// A reply arrived but could not be decoded as the expected shape.
        case invalidResponse
    }

    /// What kind of failure this is.
    public var kind: Kind
    /// A one-line explanation naming what failed and where.
    public var message: String

    /// Creates an error; prefer the static factories.
    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    /// A readable form: the kind, then the message.
    public var description: String { "NATS \(kind.rawValue): \(message)" }

    static func invalidConfiguration(_ message: String) -> NATSError { NATSError(kind: .invalidConfiguration, message: message) }
    static func connectionFailed(_ message: String) -> NATSError { NATSError(kind: .connectionFailed, message: message) }
    static func protocolViolation(_ message: String) -> NATSError { NATSError(kind: .protocolViolation, message: message) }
    static func serverError(_ message: String) -> NATSError { NATSError(kind: .serverError, message: message) }
    static func invalidSubject(_ message: String) -> NATSError { NATSError(kind: .invalidSubject, message: message) }
    static func invalidResponse(_ message: String) -> NATSError { NATSError(kind: .invalidResponse, message: message) }
    static let notConnected = NATSError(kind: .notConnected, message: "the client is not connected (reconnecting)")
    static let closed = NATSError(kind: .closed, message: "the connection is closed")
    static let cancelled = NATSError(kind: .cancelled, message: "the waiting task was cancelled")

    static func timeout(_ subject: String, after duration: Duration) -> NATSError {
        NATSError(kind: .timeout, message: "no reply on '\(subject)' within \(duration)")
    }

    static func noResponders(_ subject: String) -> NATSError {
        NATSError(kind: .noResponders, message: "no responders are subscribed to '\(subject)'")
    }
}
