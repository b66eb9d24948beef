/// An error thrown by ``EventBus``, ``Topic`` or ``TopicPattern``.
///
/// Compare errors by ``code``; ``description`` says what went wrong in words a user can act on.
public struct EventBusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of error this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: Hashable, Sendable {
            case invalidTopic, invalidPattern, invalidOption, shutDown
        }
        private let kind: Kind

        /// A topic failed validation.
        public static let invalidTopic = Code(kind: .invalidTopic)
        /// A topic pattern failed validation.
        public static let invalidPattern = Code(kind: .invalidPattern)
        /// A subscription option is out of range (for example a mailbox capacity below 1).
        public static let invalidOption = Code(kind: .invalidOption)
        /// The bus is shutting down or has shut down, and refuses new publishes and subscriptions.
        public static let shutDown = Code(kind: .shutDown)

        public var description: String {
            switch kind {
            case .invalidTopic: "invalid topic"
            case .invalidPattern: "invalid topic pattern"
            case .invalidOption: "invalid option"
            case .shutDown: "bus shut down"
            }
        }
    }

    /// What kind of error this is.
    public let code: Code
    /// What the error is about, with the reason.
    public let message: String

    public var description: String { message }

    static func invalidTopic(_ topic: String, reason: String) -> EventBusError {
        EventBusError(code: .invalidTopic, message: "invalid topic \"\(topic)\": \(reason)")
    }

    static func invalidPattern(_ pattern: String, reason: String) -> EventBusError {
        EventBusError(code: .invalidPattern, message: "invalid topic pattern \"\(pattern)\": \(reason)")
    }

    static func invalidOption(_ message: String) -> EventBusError {
        EventBusError(code: .invalidOption, message: message)
    }

    static func shutDown(_ what: String) -> EventBusError {
        EventBusError(code: .shutDown, message: "the bus is shut down: \(what) refused")
    }
}
