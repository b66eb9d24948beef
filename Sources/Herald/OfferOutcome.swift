/// What happened to an offered event.
@usableFromInline enum OfferOutcome: Sendable {
    case accepted
    /// The mailbox is full and the policy is `.wait`: the caller may wait for room.
    case full
    /// The subscription ended; the event was not taken.
    case closed
    /// An event was dropped under the overflow policy: the arriving one (`dropNewest`) or the
    /// oldest waiting one (`dropOldest`), whose topic slot is given. `report` is the number of
    /// drops to report now (0 when a report is already pending).
    /// `accepted` says whether the offered event went in (it did under `dropOldest`).
    case dropped(slot: Unmanaged<TopicSlot>, accepted: Bool, report: Int, total: Int)
}
