import Foundation
import HeraldServices

/// Why a load failed, in a form that serialises and carries no secrets.
///
/// Built from a ``ServiceError``: the kind, a one-line message, the HTTP status and the
/// service's error codes, the rate-limit reset time, for decoding errors where in the body
/// parsing stopped, and for transport errors their cause. Request headers, credentials and
/// response bodies are never copied in.
public struct LoadError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// What kind of failure: `transport`, `timeout`, `cancelled`, `httpStatus`, `rateLimited`,
    /// `decoding`, `invalidRequest`, `processingFailed`, or `state` for a state-file problem.
    public var kind: String
    /// A one-line explanation.
    public var message: String
    /// The HTTP status, when a response arrived.
    public var status: Int?
    /// The service's own error codes (`88`, `131`, …).
    public var codes: [Int]
    /// When a rate limit resets, if the service said.
    public var retryAt: Date?
    /// For decoding errors: where parsing stopped.
    public var location: String?

    /// Creates an error.
    public init(kind: String, message: String, status: Int? = nil, codes: [Int] = [], retryAt: Date? = nil,
                location: String? = nil) {
        self.kind = kind
        self.message = message
        self.status = status
        self.codes = codes
        self.retryAt = retryAt
        self.location = location
    }

    /// Converts any error thrown by a service client.
    public init(_ error: any Error) {
        if let load = error as? LoadError {
            self = load
        } else if let service = error as? ServiceError {
            // A transport failure's cause (refused, reset, "certificate verify failed") is the
            // message's point: a socket's or TLS library's text, no request data.
            let message = service.underlying.map { "\(service.message): \($0)" } ?? service.message
            self.init(kind: service.kind.rawValue, message: message, status: service.status,
                      codes: service.apiErrors.map(\.code), retryAt: service.rateLimit?.reset,
                      location: service.location)
        } else if error is CancellationError {
            self.init(kind: ServiceError.Kind.cancelled.rawValue, message: "cancelled")
        } else {
            self.init(kind: ServiceError.Kind.transport.rawValue, message: String(describing: error))
        }
    }

    /// Whether the service refused because of a rate limit.
    public var isRateLimited: Bool { kind == ServiceError.Kind.rateLimited.rawValue }

    /// `httpStatus 503: …`, `decoding at [3].id_str: …`.
    public var description: String {
        var text = kind
        if let status { text += " \(status)" }
        if let location { text += " at \(location)" }
        return text + ": " + message
    }
}
