import Foundation
import Herald
import HeraldServices

/// An event read back from an archive line: its topic and its JSON as written, encoded as that
/// JSON again, so a post rule renders it as it rendered the live event.
public struct ArchivedEvent: Event, Hashable {
    /// The topic it was published on.
    public var topic: Topic
    /// The event's JSON, as the archive holds it.
    public var json: JSONValue

    /// An archived event.
    public init(topic: Topic, json: JSONValue) {
        self.topic = topic
        self.json = json
    }

    /// Encodes ``json`` alone.
    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }

    /// Decodes an event's JSON; its topic is unknown here (`archived`).
    public init(from decoder: any Decoder) throws {
        self.json = try JSONValue(from: decoder)
        self.topic = "archived"
    }

    /// The envelope an archive line holds (`seq`, `time`, `topic`, `sender`, `id`,
    /// `correlation`, `event`), with its own id, sender and time, or nil when the line is not one.
    public static func envelope(fromLine text: String) -> Envelope<any Event>? {
        guard let data = text.data(using: .utf8), case .object(let fields)? = try? JSONDecoder().decode(JSONValue.self, from: data),
              case .string(let topicText)? = fields["topic"], let topic = try? Topic(validating: topicText),
              let event = fields["event"] else { return nil }
        func string(_ key: String) -> String? {
            if case .string(let value)? = fields[key] { value } else { nil }
        }
        let id = string("id").flatMap(EventID.init) ?? EventID(bus: UUID(), sequence: 0)
        let correlation = string("correlation").flatMap(EventID.init) ?? id
        let time = string("time").flatMap(ArchiveWindow.parseTime) ?? Date(timeIntervalSince1970: 0)
        return Envelope(topic: topic, sender: string("sender").map { Sender($0) }, id: id, correlationID: correlation, timestamp: time,
                        event: ArchivedEvent(topic: topic, json: event) as any Event)
    }
}
