import Foundation
import Herald
import HeraldServices
import HeraldSubscribers

/// How an event travels between nodes: a local envelope becomes a message on `herald.<topic>`
/// whose body is the JSON object the archive writes for it, and a message from the stream
/// becomes a ``RemoteEvent`` (or is recognised as this node's own, or as malformed).
///
/// Headers: `Nats-Msg-Id` is the event's id (JetStream stores a retried publish once),
/// `Herald-Node` the publishing node, `Herald-Sender` and `Herald-Correlation` the envelope's
/// sender and correlation id, so a consumer can route without parsing the body.
public struct ClusterEventCodec: Sendable {
    /// `Nats-Msg-Id`.
    public static let messageIDHeader = "Nats-Msg-Id"
    /// `Herald-Node`.
    public static let nodeHeader = "Herald-Node"
    /// `Herald-Sender`.
    public static let senderHeader = "Herald-Sender"
    /// `Herald-Correlation`.
    public static let correlationHeader = "Herald-Correlation"

    /// What a message from the stream is to this node.
    public enum Decoded: Sendable, Hashable {
        /// This node published it: not imported again.
        case own
        /// An event to publish on the local bus, from `sender`, in `correlation`'s chain.
        case event(RemoteEvent, sender: Sender?, correlation: EventID?)
        /// Not an event Herald can import, and why.
        case malformed(String)
    }

    /// This node's name.
    public let node: String

    /// A codec for `node`.
    public init(node: String) {
        self.node = node
    }

    /// The subject an event on `topic` is exported on.
    public static func subject(for topic: Topic) -> String { ClusterSettings.eventSubjectPrefix + topic.name }

    /// The message for a local envelope.
    ///
    /// - Throws: the event's own encoding error.
    public func message(for envelope: Envelope<any Event>) throws -> ClusterMessage {
        var encoder = EnvelopeLineEncoder()
        return try message(for: envelope, encoder: &encoder)
    }

    /// The message for a local envelope, with the archive's encoder reused across calls (it
    /// caches per event type).
    package func message(for envelope: Envelope<any Event>, encoder: inout EnvelopeLineEncoder) throws -> ClusterMessage {
        var body = try encoder.line(for: envelope)
        if body.last == UInt8(ascii: "\n") { body.removeLast() }
        var headers = [ClusterMessage.Header(Self.messageIDHeader, envelope.id.description), .init(Self.nodeHeader, node)]
        if let sender = envelope.sender { headers.append(.init(Self.senderHeader, sender.id)) }
        headers.append(.init(Self.correlationHeader, envelope.correlationID.description))
        return ClusterMessage(subject: Self.subject(for: envelope.topic), headers: headers, payload: body)
    }

    /// What `message` (from `herald.>`) is to this node.
    public func decode(_ message: ClusterMessage) -> Decoded {
        let prefix = ClusterSettings.eventSubjectPrefix
        guard message.subject.hasPrefix(prefix), let topic = try? Topic(validating: String(message.subject.dropFirst(prefix.count))) else {
            return .malformed("the subject \"\(Self.excerpt(message.subject))\" is not herald.<topic>")
        }
        if let size = message.oversize {
            return .malformed(ClusterMessage.oversizeReason(size))
        }
        if let problem = message.headerProblem {
            // Without its headers the message cannot say which node sent it (this one, maybe).
            return .malformed("its header block cannot be read: \(problem)")
        }
        let origin: String
        switch message.header(Self.nodeHeader) {
        case nil:
            origin = ClusterSettings.externalNode
        case let name? where name == node:
            return .own
        case let name? where ClusterSettings.isNodeName(name) || name == ClusterSettings.externalNode:
            origin = name
        case let name?:
            return .malformed("the Herald-Node header \"\(Self.excerpt(name))\" is not a node name")
        }
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: Data(message.payload))
        } catch let problem as Problem {
            return .malformed(problem.reason)
        } catch {
            return .malformed("the body is not JSON")
        }
        if let written = body.topic, written != topic.name {
            return .malformed("the body's topic \"\(Self.excerpt(written))\" is not the subject's (\(topic.name))")
        }
        let correlationText = body.correlation ?? message.header(Self.correlationHeader)
        var correlation: EventID?
        if let correlationText {
            guard let id = EventID(correlationText) else {
                return .malformed("the correlation \"\(Self.excerpt(correlationText))\" is not an event id (<uuid>:<sequence>)")
            }
            correlation = id
        }
        let senderText = body.sender ?? message.header(Self.senderHeader)
        let event = RemoteEvent(topic: topic, node: origin, origin: .init(id: body.id ?? message.header(Self.messageIDHeader), seq: body.seq, time: body.time),
                                event: body.event)
        return .event(event, sender: senderText.map { Sender($0) }, correlation: correlation)
    }

    static func excerpt(_ text: String) -> String {
        let short = text.count <= 60 ? text : String(text.prefix(60)) + "…"
        return ArchiveReader.oneLine(short)
    }

    /// Why a body is not an event object, in words.
    struct Problem: Error {
        var reason: String
    }

    /// The archive's envelope object: `event` required, the rest optional but typed.
    struct Body: Decodable {
        var topic: String?
        var sender: String?
        var id: String?
        var correlation: String?
        var time: Date?
        var seq: UInt64?
        var event: JSONValue

        enum CodingKeys: String, CodingKey { case topic, sender, id, correlation, time, seq, event }

        init(from decoder: any Decoder) throws {
            guard let container = try? decoder.container(keyedBy: CodingKeys.self) else {
                throw Problem(reason: "the body is not a JSON object")
            }
            func text(_ key: CodingKeys) throws -> String? {
                guard container.contains(key) else { return nil }
                guard let value = try? container.decode(String.self, forKey: key), !value.isEmpty else {
                    throw Problem(reason: "\"\(key.rawValue)\" is not a non-empty string")
                }
                return value
            }
            topic = try text(.topic)
            sender = try text(.sender)
            id = try text(.id)
            correlation = try text(.correlation)
            if let written = try text(.time) {
                guard let date = Self.date(written) else { throw Problem(reason: "\"time\" is not an ISO 8601 date") }
                time = date
            }
            if container.contains(.seq) {
                guard let value = try? container.decode(UInt64.self, forKey: .seq) else {
                    throw Problem(reason: "\"seq\" is not a whole number")
                }
                seq = value
            }
            guard container.contains(.event), let event = try? container.decode(JSONValue.self, forKey: .event) else {
                throw Problem(reason: "the body has no \"event\" member (a Herald event object is {\"topic\", \"event\", …})")
            }
            self.event = event
        }

        static func date(_ text: String) -> Date? {
            (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text))
        }
    }
}
