/// One event waiting in a mailbox, with what the bus needs to account for it.
@usableFromInline struct MailboxItem<Payload: Sendable>: Sendable {
    @usableFromInline var payload: Payload
    /// The topic's slot. Slots live as long as the bus core, which every mailbox user holds.
    @usableFromInline var slot: Unmanaged<TopicSlot>
    @usableFromInline var sequence: UInt64

    @inlinable
    init(payload: Payload, slot: Unmanaged<TopicSlot>, sequence: UInt64) {
        self.payload = payload
        self.slot = slot
        self.sequence = sequence
    }
}
