/// Why a ``ServiceGroup`` stopped on its own: a service threw, or ended before it was asked to.
///
/// Names the service, so a program can say which part failed.
public struct ServiceGroupError: Error, Sendable, CustomStringConvertible {
    private enum Code: Sendable {
        case failed(any Error)
        case endedUnexpectedly
    }

    private let code: Code
    /// The name the failing service had in the group.
    public let service: String

    private init(service: String, code: Code) {
        self.service = service
        self.code = code
    }

    /// `service` threw `error`.
    public static func serviceFailed(_ service: String, _ error: any Error) -> ServiceGroupError {
        ServiceGroupError(service: service, code: .failed(error))
    }

    /// `service` returned before the group asked it to stop.
    public static func serviceEndedUnexpectedly(_ service: String) -> ServiceGroupError {
        ServiceGroupError(service: service, code: .endedUnexpectedly)
    }

    /// What the service threw (nil when it returned early).
    public var underlying: (any Error)? {
        switch code {
        case .failed(let error): error
        case .endedUnexpectedly: nil
        }
    }

    /// Whether the service returned early instead of throwing.
    public var endedUnexpectedly: Bool {
        if case .endedUnexpectedly = code { return true }
        return false
    }

    /// `<service>: <error>`, or `<service>: ended before it was asked to stop`.
    public var description: String {
        switch code {
        case .failed(let error): "\(service): \(error)"
        case .endedUnexpectedly: "\(service): ended before it was asked to stop"
        }
    }
}
