#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A Unix signal a ``UnixSignalsSequence`` can trap.
public struct UnixSignal: Hashable, Sendable, CustomStringConvertible {
    /// The signal's number.
    public let rawValue: Int32

    /// A signal by number.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Interrupt (Ctrl-C).
    public static let sigint = UnixSignal(rawValue: SIGINT)
    /// Termination, as `kill` and service managers send it.
    public static let sigterm = UnixSignal(rawValue: SIGTERM)
    /// Hang-up.
    public static let sighup = UnixSignal(rawValue: SIGHUP)
    /// User-defined signal 1.
    public static let sigusr1 = UnixSignal(rawValue: SIGUSR1)
    /// User-defined signal 2.
    public static let sigusr2 = UnixSignal(rawValue: SIGUSR2)

    /// `SIGINT`, `SIGTERM`, … or `signal <number>`.
    public var description: String {
        switch rawValue {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        case SIGUSR1: "SIGUSR1"
        case SIGUSR2: "SIGUSR2"
        default: "signal \(rawValue)"
        }
    }
}
