/// The headers of a NATS message (`HPUB` / `HMSG`): ordered name-value pairs, a name may repeat,
/// plus the optional status of the `NATS/1.0 <code> <description>` line the server uses for
/// no-responders (503), JetStream's "no messages" (404), timeouts (408) and heartbeats (100).
///
/// Names keep their case on the wire (JetStream matches `Nats-Msg-Id` exactly); lookups try the
/// exact name first, then ignore case. A value type, `Sendable`.
public struct NATSHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// The pairs in wire order.
    public private(set) var fields: [(name: String, value: String)]
    /// The status code of the first line (`503` in `NATS/1.0 503`), when there is one.
    public var status: Int?
    /// The text after the status code (`No Messages`), when there is one.
    public var statusDescription: String?

    /// No headers and no status.
    public init() {
        self.init([])
    }

    /// Headers with the given pairs and, for a status message, its status.
    public init(_ fields: [(name: String, value: String)], status: Int? = nil, statusDescription: String? = nil) {
        self.fields = fields
        self.status = status
        self.statusDescription = statusDescription
    }

    /// Headers from a literal, e.g. `["Nats-Msg-Id": "42"]`.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements.map { (name: $0.0, value: $0.1) })
    }

    /// The first value of `name`, or nil.
    public subscript(name: String) -> String? {
        get { values(for: name).first }
        set {
            fields.removeAll { $0.name == name }
            if let newValue { fields.append((name, newValue)) }
        }
    }

    /// Every value of `name`, in order.
    public func values(for name: String) -> [String] {
        let exact = fields.filter { $0.name == name }.map(\.value)
        if !exact.isEmpty { return exact }
        let lowered = name.lowercased()
        return fields.filter { $0.name.lowercased() == lowered }.map(\.value)
    }

    /// Adds a pair, keeping any existing values of the name.
    public mutating func append(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// Whether there are no pairs and no status.
    public var isEmpty: Bool { fields.isEmpty && status == nil }

    /// Iterates the pairs in wire order.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// Equal when the status and the pairs (in order) are equal.
    public static func == (lhs: NATSHeaders, rhs: NATSHeaders) -> Bool {
        lhs.status == rhs.status && lhs.statusDescription == rhs.statusDescription
            && lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// Hashes the status and the pairs.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        hasher.combine(statusDescription)
        for field in fields {
            hasher.combine(field.name)
            hasher.combine(field.value)
        }
    }
}

extension NATSHeaders {
    /// Checks that the headers can be written: names are tokens without `:` or white space,
    /// values have no CR or LF (either would end the header block early).
    func validate() throws(NATSError) {
        for field in fields {
            guard !field.name.isEmpty,
                  field.name.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ":") })
            else { throw .invalidSubject("the header name '\(field.name)' is empty or has a ':', a space or a control character") }
            guard !field.value.utf8.contains(where: { $0 == 13 || $0 == 10 }) else {
                throw .invalidSubject("the value of the header '\(field.name)' contains a line break")
            }
        }
    }

    /// The header block as `HPUB` sends it: `NATS/1.0\r\n`, the pairs, an empty line.
    func encoded(into bytes: inout [UInt8]) {
        bytes.append(contentsOf: "NATS/1.0".utf8)
        if let status {
            bytes.append(UInt8(ascii: " "))
            bytes.append(contentsOf: String(status).utf8)
            if let statusDescription { bytes.append(UInt8(ascii: " ")); bytes.append(contentsOf: statusDescription.utf8) }
        }
        bytes.append(contentsOf: [13, 10])
        for field in fields {
            bytes.append(contentsOf: field.name.utf8)
            bytes.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: " ")])
            bytes.append(contentsOf: field.value.utf8)
            bytes.append(contentsOf: [13, 10])
        }
        bytes.append(contentsOf: [13, 10])
    }

    /// The encoded size, so `HPUB` can state it before writing.
    var encodedCount: Int {
        var count = 8 + 2 + 2
        if let status {
            count += 1 + String(status).utf8.count
            if let statusDescription { count += 1 + statusDescription.utf8.count }
        }
        for field in fields { count += field.name.utf8.count + 2 + field.value.utf8.count + 2 }
        return count
    }

    /// The smallest header block: `NATS/1.0`, its line end and the empty line that ends the block.
    static let minimumBlockSize = 12

    /// Parses a header block of an `HMSG`.
    /// - Throws: a reason (without position; the parser adds it) when the block is malformed.
    static func parse(_ block: ArraySlice<UInt8>) throws(HeaderBlockError) -> NATSHeaders {
        var lines: [ArraySlice<UInt8>] = []
        var start = block.startIndex
        var index = block.startIndex
        while index < block.endIndex {
            if block[index] == 10 {
                var end = index
                if end > start, block[end - 1] == 13 { end -= 1 }
                lines.append(block[start..<end])
                start = index + 1
            }
            index += 1
        }
        if start < block.endIndex { throw HeaderBlockError(reason: "the header block does not end with CRLF") }
        guard let first = lines.first else { throw HeaderBlockError(reason: "the header block is empty") }
        let version = Array("NATS/1.0".utf8)
        guard first.count >= version.count, Array(first.prefix(version.count)) == version else {
            throw HeaderBlockError(reason: "the header block does not start with NATS/1.0")
        }
        var headers = NATSHeaders()
        let statusText = String(decoding: first.dropFirst(version.count), as: UTF8.self).trimmingSpaces
        if !statusText.isEmpty {
            let code = String(statusText.prefix { $0 != " " })
            guard code.count == 3, let status = Int(code) else {
                throw HeaderBlockError(reason: "the status '\(shown(Array(statusText.utf8)[...]))' is not a three-digit code")
            }
            headers.status = status
            let description = String(statusText.dropFirst(code.count)).trimmingSpaces
            headers.statusDescription = description.isEmpty ? nil : description
        }
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                throw HeaderBlockError(reason: "the header line '\(shown(line))' has no colon")
            }
            guard colon > line.startIndex else { throw HeaderBlockError(reason: "the header line '\(shown(line))' has no name") }
            let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self)
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingSpaces
            headers.fields.append((name, value))
        }
        return headers
    }
}

extension NATSHeaders {
    /// Up to 40 bytes of a line as printable ASCII, anything else escaped (it goes into errors
    /// and events).
    static func shown(_ line: ArraySlice<UInt8>) -> String {
        String(decoding: line.prefix(40), as: UTF8.self).unicodeScalars
            .map { $0.value >= 32 && $0.value < 127 ? String($0) : "\\u{\(String($0.value, radix: 16))}" }.joined()
    }
}

/// Why a header block did not parse (the parser hands the message over with it as
/// ``NATSMessage/headerProblem``).
struct HeaderBlockError: Error {
    var reason: String
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }),
              let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })
        else { return "" }
        return String(scalars[first...last])
    }
}
