/// What a log line says about one event: its level, a one-line summary and a few key/value
/// fields. Produced by an ``EventSummarizer``.
public struct LogRecord: Sendable, Hashable {
    /// A key and its value, in the order given.
    public struct Field: Sendable, Hashable {
        /// The key (`new`, `status`).
        public var key: String
        /// The value, as text.
        public var value: String

        /// Creates a field.
        public init(_ key: String, _ value: String) {
            self.key = key
            self.value = value
        }
    }

    /// The level.
    public var level: LogLevel
    /// The one-line summary (`home: 20 statuses, 3 new`).
    public var message: String
    /// Extra fields for `logfmt` and `json`.
    public var fields: [Field]

    /// Creates a record.
    public init(level: LogLevel, message: String, fields: [Field] = []) {
        self.level = level
        self.message = message
        self.fields = fields
    }
}
