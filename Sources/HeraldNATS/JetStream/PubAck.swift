/// A stream's acknowledgement of a publish: where the message was stored.
public struct PubAck: Sendable, Hashable, Decodable {
    /// The stream that stored it.
    public var stream: String
    /// Its sequence in the stream.
    public var sequence: UInt64
    /// Whether it was a repeat of a `Nats-Msg-Id` inside the duplicate window (stored once, earlier).
    public var duplicate: Bool
    /// The JetStream domain, if any.
    public var domain: String?

    enum CodingKeys: String, CodingKey { case stream, sequence = "seq", duplicate, domain }

    /// An acknowledgement with the given fields.
    public init(stream: String, sequence: UInt64, duplicate: Bool = false, domain: String? = nil) {
        self.stream = stream
        self.sequence = sequence
        self.duplicate = duplicate
        self.domain = domain
    }

    /// Decodes an acknowledgement, with `duplicate` false when absent.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        stream = try container.decode(String.self, forKey: .stream)
        sequence = try container.decode(UInt64.self, forKey: .sequence)
        duplicate = try container.decodeIfPresent(Bool.self, forKey: .duplicate) ?? false
        domain = try container.decodeIfPresent(String.self, forKey: .domain)
    }

    /// Reads the server's ack JSON (`{"stream":"S", "seq":7,"duplicate": true}`, spacing as 2.9
    /// writes it) without a JSON decoder, as it is on every acked publish's path; nil for anything
    /// else (an error object, escapes), which then goes through the decoder.
    static func scan(_ bytes: [UInt8]) -> PubAck? {
        guard bytes.count < 512, valueStart(bytes, key: Keys.error) == nil else { return nil }
        guard let stream = stringValue(bytes, key: Keys.stream), let sequence = numberValue(bytes, key: Keys.sequence) else { return nil }
        var duplicate = false
        if let start = valueStart(bytes, key: Keys.duplicate) { duplicate = bytes[start...].starts(with: Keys.true) }
        return PubAck(stream: stream, sequence: sequence, duplicate: duplicate, domain: stringValue(bytes, key: Keys.domain))
    }

    /// The quoted keys ``scan(_:)`` looks for, made once.
    private enum Keys {
        static let error = Array("\"error\"".utf8)
        static let stream = Array("\"stream\"".utf8)
        static let sequence = Array("\"seq\"".utf8)
        static let duplicate = Array("\"duplicate\"".utf8)
        static let domain = Array("\"domain\"".utf8)
        static let `true` = Array("true".utf8)
    }

    /// The index of the value of `needle` (a quoted key) followed by `:` (spaces skipped), if there.
    private static func valueStart(_ bytes: [UInt8], key needle: [UInt8]) -> Int? {
        var index = 0
        while index + needle.count <= bytes.count {
            if bytes[index] == needle[0], bytes[index..<(index + needle.count)].elementsEqual(needle) {
                var position = index + needle.count
                while position < bytes.count, bytes[position] == 32 { position += 1 }
                if position < bytes.count, bytes[position] == UInt8(ascii: ":") {
                    position += 1
                    while position < bytes.count, bytes[position] == 32 { position += 1 }
                    return position
                }
            }
            index += 1
        }
        return nil
    }

    private static func stringValue(_ bytes: [UInt8], key: [UInt8]) -> String? {
        guard let start = valueStart(bytes, key: key), start < bytes.count, bytes[start] == UInt8(ascii: "\"") else { return nil }
        guard let end = bytes[(start + 1)...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        let value = bytes[(start + 1)..<end]
        // Escapes need the decoder; stream names cannot contain them anyway.
        guard !value.contains(UInt8(ascii: "\\")) else { return nil }
        return String(decoding: value, as: UTF8.self)
    }

    private static func numberValue(_ bytes: [UInt8], key: [UInt8]) -> UInt64? {
        guard let start = valueStart(bytes, key: key) else { return nil }
        var value: UInt64 = 0
        var index = start
        while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57, index - start < 19 {
            value = value * 10 + UInt64(bytes[index] - 48)
            index += 1
        }
        return index > start ? value : nil
    }
}

/// The expectations and id of one JetStream publish, sent as headers.
public struct JetStreamPublishOptions: Sendable, Hashable {
    /// `Nats-Msg-Id`: a repeat inside the duplicate window is stored once (``PubAck/duplicate``).
    public var messageID: String?
    /// `Nats-Expected-Stream`: refuse unless this stream stores the subject.
    public var expectedStream: String?
    /// `Nats-Expected-Last-Sequence`: refuse unless the stream's last sequence is this.
    public var expectedLastSequence: UInt64?
    /// `Nats-Expected-Last-Subject-Sequence`: refuse unless the subject's last sequence is this
    /// (0: the subject has no message). A KV update's revision check.
    public var expectedLastSubjectSequence: UInt64?
    /// `Nats-Expected-Last-Msg-Id`: refuse unless the stream's last message had this id.
    public var expectedLastMessageID: String?

    /// Options with the given id and no expectations.
    public init(messageID: String? = nil, expectedStream: String? = nil, expectedLastSequence: UInt64? = nil,
                expectedLastSubjectSequence: UInt64? = nil, expectedLastMessageID: String? = nil) {
        self.messageID = messageID
        self.expectedStream = expectedStream
        self.expectedLastSequence = expectedLastSequence
        self.expectedLastSubjectSequence = expectedLastSubjectSequence
        self.expectedLastMessageID = expectedLastMessageID
    }

    /// `headers` with these options added.
    func applied(to headers: NATSHeaders?) -> NATSHeaders? {
        guard messageID != nil || expectedStream != nil || expectedLastSequence != nil
            || expectedLastSubjectSequence != nil || expectedLastMessageID != nil else { return headers }
        var result = headers ?? NATSHeaders()
        if let messageID { result["Nats-Msg-Id"] = messageID }
        if let expectedStream { result["Nats-Expected-Stream"] = expectedStream }
        if let expectedLastSequence { result["Nats-Expected-Last-Sequence"] = String(expectedLastSequence) }
        if let expectedLastSubjectSequence { result["Nats-Expected-Last-Subject-Sequence"] = String(expectedLastSubjectSequence) }
        if let expectedLastMessageID { result["Nats-Expected-Last-Msg-Id"] = expectedLastMessageID }
        return result
    }
}
