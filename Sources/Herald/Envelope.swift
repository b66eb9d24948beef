#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An event with what the bus knows about its publication.
///
/// Pattern subscriptions receive `Envelope<any Event>`; `subscribe(envelopesOf:)` receives
/// `Envelope<E>`. Encoding an envelope writes `seq`, `time`, `topic`, `sender`, `id`,
/// `correlation` and `event`.
public struct Envelope<Payload: Sendable>: Sendable {
    /// The topic the event was published on.
    public let topic: Topic
    /// Who published it, when the publisher said.
    public let sender: Sender?
    /// The event's globally unique id (bus id and sequence number).
    public let id: EventID
    /// The id of the event that started the chain this one belongs to (its own id by default).
    public let correlationID: EventID
    /// When it was published, by the bus's clock.
    public let timestamp: Date
    /// The event.
    public let event: Payload

    /// The bus-wide sequence number (`id.sequence`).
    public var sequence: UInt64 { id.sequence }

    /// An envelope from its parts (for tests, replays and bridges).
    public init(topic: Topic, sender: Sender?, id: EventID, correlationID: EventID, timestamp: Date, event: Payload) {
        self.topic = topic
        self.sender = sender
        self.id = id
        self.correlationID = correlationID
        self.timestamp = timestamp
        self.event = event
    }

    @inlinable
    init(_ header: EnvelopeHeader, event: Payload) {
        self.init(topic: header.topic, sender: header.sender, id: header.id,
                  correlationID: header.correlationID, timestamp: header.timestamp, event: event)
    }

    /// The same envelope with another payload.
    public func map<T: Sendable>(_ transform: (Payload) throws -> T) rethrows -> Envelope<T> {
        Envelope<T>(topic: topic, sender: sender, id: id, correlationID: correlationID,
                    timestamp: timestamp, event: try transform(event))
    }
}

extension Envelope where Payload == any Event {
    /// The event as `type`, or nil when it is another type.
    public func event<E: Event>(as type: E.Type) -> E? { event as? E }
}

extension Envelope: Encodable {
    enum CodingKeys: String, CodingKey {
        case seq, time, topic, sender, id, correlation, event
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id.sequence, forKey: .seq)
        try container.encode(timestamp, forKey: .time)
        try container.encode(topic, forKey: .topic)
        try container.encodeIfPresent(sender, forKey: .sender)
        try container.encode(id, forKey: .id)
        try container.encode(correlationID, forKey: .correlation)
        if let encodable = event as? any Encodable {
            try container.encode(encodable, forKey: .event)
        } else {
            throw EncodingError.invalidValue(
                event, .init(codingPath: encoder.codingPath + [CodingKeys.event],
                             debugDescription: "\(type(of: event)) is not Encodable"))
        }
    }
}

/// The non-generic part of an envelope, made once per publish when some subscriber needs it.
@usableFromInline struct EnvelopeHeader: Sendable {
    @usableFromInline let topic: Topic
    @usableFromInline let sender: Sender?
    @usableFromInline let id: EventID
    @usableFromInline let correlationID: EventID
    @usableFromInline let timestamp: Date

    init(topic: Topic, sender: Sender?, id: EventID, correlationID: EventID, timestamp: Date) {
        self.topic = topic
        self.sender = sender
        self.id = id
        self.correlationID = correlationID
        self.timestamp = timestamp
    }
}
