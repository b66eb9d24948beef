import Foundation

/// Everything a service call can fail with, saying what happened.
///
/// A struct over a ``Kind`` so new details can be added without breaking callers. Each kind
/// fills the fields that matter to it: `status`, `apiErrors` and `bodyExcerpt` for
/// `.httpStatus`; `rateLimit` for `.rateLimited`; `location` and `bodyExcerpt` for
/// `.decoding`; `underlying` for `.transport`.
public struct ServiceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Kind: String, Sendable, Hashable {
        /// The exchange failed below HTTP: refused, reset, dropped, DNS, TLS.
        case transport
        /// The deadline passed before the whole response arrived.
        case timeout
        /// The calling task was cancelled.
        case cancelled
        /// The service answered with a non-2xx status (other than a rate limit).
        case httpStatus
        /// The service said too many requests (429, or code 88).
        case rateLimited
        /// The body could not be read as the expected shape.
        case decoding
        /// The request could not be built from the arguments given.
        case invalidRequest
        /// The service accepted an upload but reported that processing failed.
        case processingFailed
    }

    /// What kind of failure this is.
    public var kind: Kind
    /// A one-line explanation.
    public var message: String
    /// The HTTP status, when a response arrived.
    public var status: Int?
    /// The service's own error codes, parsed from `{"errors":[…]}`.
    public var apiErrors: [APIErrorDetail]
    /// The rate-limit state, with the reset time, when the service reported one.
    public var rateLimit: RateLimit?
    /// For decoding errors: the coding path (`[3].user.id_str`) or position (`line 4, column 9`).
    public var location: String?
    /// The first characters of the body, for diagnosis.
    public var bodyExcerpt: String?
    /// The underlying error's description, for transport errors.
    public var underlying: String?

    /// Creates an error; prefer the static factories.
    public init(
        kind: Kind, message: String, status: Int? = nil, apiErrors: [APIErrorDetail] = [],
        rateLimit: RateLimit? = nil, location: String? = nil, bodyExcerpt: String? = nil,
        underlying: String? = nil
    ) {
        self.kind = kind
        self.message = message
        self.status = status
        self.apiErrors = apiErrors
        self.rateLimit = rateLimit
        self.location = location
        self.bodyExcerpt = bodyExcerpt
        self.underlying = underlying
    }

    /// The exchange failed below HTTP.
    public static func transport(_ underlying: String) -> ServiceError {
        ServiceError(kind: .transport, message: "transport failed", underlying: underlying)
    }

    /// The deadline passed.
    public static func timeout(after duration: Duration?) -> ServiceError {
        ServiceError(kind: .timeout, message: "timed out" + (duration.map { " after \($0)" } ?? ""))
    }

    /// The calling task was cancelled.
    public static let cancelled = ServiceError(kind: .cancelled, message: "cancelled")

    /// A body could not be decoded.
    public static func decoding(_ reason: String, location: String? = nil, body: Data) -> ServiceError {
        ServiceError(kind: .decoding, message: reason, location: location, bodyExcerpt: excerpt(of: body))
    }

    /// Arguments could not make a request.
    public static func invalidRequest(_ reason: String) -> ServiceError {
        ServiceError(kind: .invalidRequest, message: reason)
    }

    /// Whether the service reported `code` among its errors.
    public func hasAPIError(code: Int) -> Bool {
        apiErrors.contains { $0.code == code }
    }

    /// The first 200 characters of `body`, invalid UTF-8 repaired.
    public static func excerpt(of body: Data, limit: Int = 200) -> String {
        let text = String(decoding: body.prefix(limit * 4), as: UTF8.self)
        return text.count > limit ? String(text.prefix(limit)) + "…" : text
    }

    /// A readable line with every detail that is present.
    public var description: String {
        var parts = ["\(kind.rawValue): \(message)"]
        if let status { parts.append("status \(status)") }
        if !apiErrors.isEmpty { parts.append("errors [" + apiErrors.map(\.description).joined(separator: "; ") + "]") }
        if let reset = rateLimit?.reset { parts.append("resets at \(Int(reset.timeIntervalSince1970))") }
        if let location { parts.append("at \(location)") }
        if let underlying { parts.append("underlying: \(underlying)") }
        if let bodyExcerpt, !bodyExcerpt.isEmpty { parts.append("body: \(bodyExcerpt)") }
        return parts.joined(separator: ", ")
    }
}
