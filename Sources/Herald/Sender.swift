/// Who published an event: the bus's counterpart of NotificationCenter's `object:`.
///
/// A subscription made `from:` a sender receives only that sender's events, as a view
/// controller observes only its own loader with NotificationCenter's `object:`. A sender is a plain string identity, so envelopes
/// serialise and a bridge can carry it to another process.
public struct Sender: Hashable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The sender's identity, for example `loader.home`.
    public let id: String

    /// A sender with the given identity.
    public init(_ id: String) { self.id = id }

    public init(stringLiteral value: String) { self.id = value }

    /// A sender identified by an object's type and address, as NotificationCenter identifies
    /// `object:`. The identity is only unique while the object lives; prefer a stable name.
    public init(object: AnyObject) {
        let address = UInt(bitPattern: ObjectIdentifier(object))
        self.id = "\(type(of: object))@0x\(String(address, radix: 16))"
    }

    public var description: String { id }

    public init(from decoder: any Decoder) throws {
        self.id = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(id)
    }
}
