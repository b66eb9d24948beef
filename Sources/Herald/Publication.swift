#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One event on its way to its subscribers: everything but the event itself, which travels
/// beside it. Not generic, so the publish path copies and destroys it with concrete code (a
/// generic aggregate was destroyed through its value witnesses, on every publish).
@usableFromInline
struct Publication: Sendable {
    @usableFromInline let topic: Topic
    @usableFromInline let sender: Sender?
    @usableFromInline let sequence: UInt64
    @usableFromInline let correlation: EventID?
    @usableFromInline let slot: Unmanaged<TopicSlot>
    @usableFromInline var counted: Bool
    /// Made on first use: subscribers that take the bare value need no timestamp. The rest of
    /// the envelope's header is already here, so only the timestamp is kept.
    @usableFromInline var timestamp: Date?

    @inlinable
    init(topic: Topic, sender: Sender?, correlation: EventID?, claim: Claim) {
        self.init(topic: topic, sender: sender, correlation: correlation, sequence: claim.sequence,
                  slot: claim.slot, counted: claim.counted, timestamp: claim.timestamp)
    }

    @inlinable
    init(topic: Topic, sender: Sender?, correlation: EventID?, sequence: UInt64, slot: Unmanaged<TopicSlot>,
         counted: Bool, timestamp: Date?) {
        self.topic = topic
        self.sender = sender
        self.sequence = sequence
        self.correlation = correlation
        self.slot = slot
        self.timestamp = timestamp
        self.counted = counted
    }

    @inlinable
    mutating func envelopeHeader(_ core: BusCore) -> EnvelopeHeader {
        let stamp: Date
        if let timestamp {
            stamp = timestamp
        } else {
            stamp = core.now()
            timestamp = stamp
        }
        return core.makeHeader(topic: topic, sender: sender, sequence: sequence, correlation: correlation,
                               timestamp: stamp)
    }

    @inlinable
    func item<E: Event>(_ event: E) -> MailboxItem<E> { MailboxItem(payload: event, slot: slot, sequence: sequence) }
}
