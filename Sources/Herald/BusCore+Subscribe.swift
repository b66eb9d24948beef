import Synchronization

/// How a subscription's events reach it.
@usableFromInline
enum Consumer<Payload: Sendable>: Sendable {
    case inline(@Sendable (Payload) throws -> Void)
    case queued(@Sendable (Payload) throws -> Void)
    case mainActor(@MainActor @Sendable (Payload) throws -> Void)
    /// An ``EventStream`` iterates the mailbox itself.
    case stream
}

/// What a subscription receives: the event, `Envelope<E>`, or `Envelope<any Event>`.
@usableFromInline enum Shape { case value, envelope, anyEnvelope }

/// Everything `subscribe` needs besides the consumer.
@usableFromInline
struct SubscriptionRequest {
    var shape: Shape
    var eventType: ObjectIdentifier?
    var eventTypeName: String?
    var pattern: TopicPattern?
    var sender: Sender?
    var name: String?
    @usableFromInline var delivery: Delivery

    @usableFromInline
    init(shape: Shape, eventType: ObjectIdentifier?, eventTypeName: String?, pattern: TopicPattern?,
         sender: Sender?, name: String?, delivery: Delivery) {
        self.shape = shape
        self.eventType = eventType
        self.eventTypeName = eventTypeName
        self.pattern = pattern
        self.sender = sender
        self.name = name
        self.delivery = delivery
    }
}

extension BusCore {
    /// Registers a subscription. It is live when this returns: retained events it matches are
    /// already delivered (inline) or first in its mailbox (queued).
    @usableFromInline
    func subscribe<Payload: Sendable>(
        _ request: SubscriptionRequest,
        consumer: Consumer<Payload>,
        convert: (Envelope<any Event>) -> Payload?
    ) throws(EventBusError) -> (Subscription, Mailbox<Payload>?) {
        let tokens = try request.pattern.map { pattern throws(EventBusError) in try pattern.validTokens() }
        let target: SubscriberRecord.Target
        var mailbox: Mailbox<Payload>?
        switch (consumer, request.delivery.mode) {
        case (.inline(let handler), .inline):
            let object = InlineHandler(handler)
            switch request.shape {
            case .value: target = .inlineValue(object)
            case .envelope: target = .inlineEnvelope(object)
            case .anyEnvelope: target = .inlineAny(object)
            }
        default:
            var capacity = 1024
            var overflow = OverflowPolicy.wait
            if case .queued(let c, let o) = request.delivery.mode { (capacity, overflow) = (c, o) }
            guard capacity >= 1 else {
                throw .invalidOption("mailbox capacity must be at least 1, got \(capacity)")
            }
            let box = Mailbox<Payload>(capacity: capacity, overflow: overflow, core: self)
            mailbox = box
            if request.shape != .value { queuedEnvelopes.store(true, ordering: .relaxed) }
            switch request.shape {
            case .value: target = .queuedValue(box)
            case .envelope: target = .queuedEnvelope(box)
            case .anyEnvelope: target = .queuedAny(box)
            }
        }

        typealias Replay = [(Payload, Unmanaged<TopicSlot>, UInt64)]
        let now = self.now()
        var dropReports: [(Int, Int)] = []
        var replayWork = MailboxWork()
        let (record, firstReplay) = try state.withLock { s throws(EventBusError) -> (SubscriberRecord, Replay) in
            guard s.phase == .running else { throw .shutDown("subscribing") }
            s.nextSubscriptionID += 1
            let id = s.nextSubscriptionID
            let what = request.pattern?.pattern ?? request.eventTypeName ?? "subscription"
            let record = SubscriberRecord(
                id: id, name: request.name ?? "\(what)#\(id)", pattern: request.pattern, patternTokens: tokens,
                eventType: request.eventType, eventTypeName: request.eventTypeName, sender: request.sender,
                delivery: request.delivery, target: target, mailbox: mailbox)
            let retained = s.retainedEvents(for: record, now: now, after: 0)
            guard let mailbox else {
                // Inline: registered only once its retained events are replayed (below), so no
                // live event can reach it before an older retained one.
                if retained.isEmpty { s.register(record) }
                return (record, replay(s.slotted(retained), convert))
            }
            s.register(record)
            for (payload, slot, sequence) in replay(s.slotted(retained), convert) {
                // Under the bus lock, so no live event can get in first. Nobody to wake or
                // release yet: the consumer has not started, and nothing is dropped beyond the
                // capacity (the work is run all the same, after the lock).
                let outcome = mailbox.offerHoldingLock(MailboxItem(payload: payload, slot: slot, sequence: sequence),
                                                       mayExceed: true, deferring: &replayWork)
                if case .dropped(let droppedSlot, _, let report, let total) = outcome {
                    droppedSlot.takeUnretainedValue().dropped.wrappingAdd(1, ordering: .relaxed)
                    if report > 0 { dropReports.append((report, total)) }
                }
            }
            return (record, [])
        }
        replayWork.run()
        if let handedOver = replayWork.drops { dropReports.append((handedOver.count, handedOver.total)) }
        for (count, total) in dropReports { reportDrops(record, count: count, total: total) }

        switch consumer {
        case .inline(let handler):
            var replay = firstReplay
            while !replay.isEmpty {
                for (payload, slot, sequence) in replay {
                    do {
                        try handler(payload)
                        record.delivered.wrappingAdd(1, ordering: .relaxed)
                        slot.takeUnretainedValue().delivered.wrappingAdd(1, ordering: .relaxed)
                    } catch {
                        reportFailure(record, slot: slot, sequence: sequence, error: error)
                    }
                }
                // Retained events published while we replayed come next; once there are none,
                // register, under the same lock that numbers every publish.
                let last = replay.map(\.2).max() ?? 0
                replay = try state.withLock { s throws(EventBusError) -> Replay in
                    guard s.phase == .running else { throw .shutDown("subscribing") }
                    let newer = s.retainedEvents(for: record, now: now, after: last)
                    if newer.isEmpty { s.register(record) }
                    return self.replay(s.slotted(newer), convert)
                }
            }
        case .queued(let handler):
            if let mailbox { startConsumer(mailbox, record: record, handler: handler) }
        case .mainActor(let handler):
            if let mailbox {
                Task.detached { [self] in await self.consumeOnMainActor(mailbox, record: record, handler: handler) }
            }
        case .stream:
            break
        }
        return (Subscription(core: self, record: record), mailbox)
    }

    @MainActor
    func consumeOnMainActor<Payload: Sendable>(
        _ mailbox: Mailbox<Payload>, record: SubscriberRecord, handler: @MainActor @Sendable (Payload) throws -> Void
    ) async {
        await consume(mailbox, record: record, handler: handler)
    }

    /// Starts a queued subscription's task. Inlinable, so the task's loop is specialised for
    /// the payload type in the subscriber's module.
    @inlinable
    func startConsumer<Payload: Sendable>(_ mailbox: Mailbox<Payload>, record: SubscriberRecord,
                                          handler: @escaping @Sendable (Payload) throws -> Void) {
        Task.detached { [self] in await self.consume(mailbox, record: record, handler: handler) }
    }

    /// Retained events as a subscription's payloads, with their slots and sequence numbers.
    func replay<Payload>(_ events: [(RetainedEvent, Unmanaged<TopicSlot>)], _ convert: (Envelope<any Event>) -> Payload?)
        -> [(Payload, Unmanaged<TopicSlot>, UInt64)]
    {
        events.compactMap { entry, slot in convert(entry.envelope).map { ($0, slot, entry.envelope.sequence) } }
    }

    /// A queued subscription's task: takes batches and hands each event to the handler, on the
    /// caller's isolation (the main actor for main-actor delivery).
    @inlinable
    func consume<Payload: Sendable>(
        _ mailbox: Mailbox<Payload>,
        record: SubscriberRecord,
        isolation: isolated (any Actor)? = #isolation,
        handler: (Payload) throws -> Void
    ) async {
        var batch = ContiguousArray<MailboxItem<Payload>>()
        while let taken = await mailbox.nextBatch(&batch) {
            reportDrops(record, count: taken.dropsToReport, total: taken.droppedTotal)
            var delivered = 0
            var run = DeliveryRun()
            var index = taken.start
            while index < batch.count, record.isActive {
                let item = batch[index]
                index += 1
                do {
                    try handler(item.payload)
                    delivered += 1
                    run.count(item.slot)
                } catch {
                    reportFailure(record, slot: item.slot, sequence: item.sequence, error: error)
                }
            }
            run.flush()
            record.delivered.wrappingAdd(delivered, ordering: .relaxed)
            if index < batch.count { mailbox.abandon(batch.count - index) }
            // A small batch means we are keeping up: let the publishers run a moment so the
            // next batch is bigger and the mailbox lock changes hands less often.
            if batch.count - taken.start < Mailbox<Payload>.smallBatch {
                for _ in 0..<Mailbox<Payload>.yieldsAfterSmallBatch { await Task.yield() }
            }
        }
    }
}

/// Counts deliveries per topic in runs, so a batch of one topic costs one atomic add.
@usableFromInline
struct DeliveryRun {
    @usableFromInline var slot: Unmanaged<TopicSlot>?
    @usableFromInline var length = 0

    @inlinable init() {}

    @inlinable mutating func count(_ next: Unmanaged<TopicSlot>) {
        if let slot, slot.toOpaque() == next.toOpaque() {
            length += 1
            return
        }
        flush()
        slot = next
        length = 1
    }

    @inlinable mutating func flush() {
        if let slot, length > 0 {
            slot._withUnsafeGuaranteedRef { _ = $0.delivered.wrappingAdd(length, ordering: .relaxed) }
        }
        length = 0
    }
}
