#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A globally unique event identity: the publishing bus's random id and the bus-wide sequence
/// number.
///
/// An envelope's ``Envelope/correlationID`` is the id of the event that started a chain: pass it
/// to `publish(_:from:correlation:)` when an event causes another (a post caused by a load), and
/// the whole chain shares one correlation id. Encoded as `"<bus uuid>:<sequence>"`.
public struct EventID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The id of the bus that published the event.
    public let bus: UUID
    /// The bus-wide sequence number of the event (1, 2, 3, … per bus, or counting up from
    /// ``EventBus/Configuration/firstSequence``).
    public let sequence: UInt64

    /// An id from its parts.
    public init(bus: UUID, sequence: UInt64) {
        self.bus = bus
        self.sequence = sequence
    }

    public var description: String { "\(bus.uuidString.lowercased()):\(sequence)" }

    /// Parses the form produced by ``description``; nil when `text` is not in that form.
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"),
            let bus = UUID(uuidString: String(text[..<colon])),
            let sequence = UInt64(text[text.index(after: colon)...])
        else { return nil }
        self.init(bus: bus, sequence: sequence)
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = EventID(text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath,
                      debugDescription: "\"\(text)\" is not an event id (<uuid>:<sequence>)"))
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
