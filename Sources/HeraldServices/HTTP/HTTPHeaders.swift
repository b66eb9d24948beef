/// An ordered list of HTTP header fields with case-insensitive lookup.
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One header field.
    public struct Field: Sendable, Hashable {
        /// The name as sent.
        public var name: String
        /// The value as sent.
        public var value: String
    }

    private var fields: [Field]

    /// Creates headers from `(name, value)` pairs, kept in order.
    public init(_ pairs: [(String, String)] = []) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    /// Creates headers from a literal.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The first value for `name` (any case), or nil. Setting replaces every value of `name`.
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.caseInsensitiveEquals(name) }?.value }
        set {
            fields.removeAll { $0.name.caseInsensitiveEquals(name) }
            if let newValue { fields.append(Field(name: name, value: newValue)) }
        }
    }

    /// Appends a field, keeping any with the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }
}

extension String {
    func caseInsensitiveEquals(_ other: String) -> Bool {
        self.utf8.count == other.utf8.count && self.lowercased() == other.lowercased()
    }
}

extension HTTPHeaders: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Header names whose values are credentials: OAuth signatures and tokens, the BaaS
    /// application key and session token, cookies.
    static let sensitiveNames: Set<String> = [
        "authorization", "proxy-authorization", "x-application-key", "x-session-token", "cookie", "set-cookie",
    ]

    /// `Name: value` pairs with credential values shown as `<redacted>`, so a request or
    /// response can be logged without leaking a signature or key.
    public var description: String {
        "[" + redactedFields.map { "\($0.name): \($0.value)" }.joined(separator: ", ") + "]"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The fields with credential values redacted, so `dump` shows no secret either.
    public var customMirror: Mirror {
        Mirror(self, unlabeledChildren: redactedFields.map { "\($0.name): \($0.value)" }, displayStyle: .collection)
    }

    private var redactedFields: [Field] {
        fields.map { field in
            Self.sensitiveNames.contains(field.name.lowercased()) ? Field(name: field.name, value: "<redacted>") : field
        }
    }
}
