import Foundation
import Herald
import Synchronization
import HeraldIO
import HeraldLifecycle
import HeraldSync

/// Archives bus events to a JSON Lines file: one envelope per line (`seq`, `time` in ISO 8601
/// UTC with milliseconds, `topic`, `sender`, `id`, `correlation`, `event`).
///
/// Guarantees:
/// - each line goes out whole in one `write(2)` on an `O_APPEND` descriptor, alone or (under
///   ``FileSinkDurability/none`` and ``FileSinkDurability/batch``) with the other lines waiting
///   in the mailbox; a failed or short write is rolled back to the last whole line, so the file
///   holds only whole lines;
/// - the file is created with mode 0600, its parent directories with 0700;
/// - a torn last line found at open (a crash mid-write) is moved to `<path>.torn` and reported
///   on `sink.<name>.torn` (``FileSinkTornLine``); every complete line is kept;
/// - ``durability`` decides when lines reach the disk (see ``FileSinkDurability``);
/// - an error (unwritable path, disk full, EIO) is thrown by the handler, so the bus publishes
///   `bus.subscriber.failed`; the file is reopened for the next event.
///
/// It subscribes once with a batch mailbox (``EventBus/subscribeInBatches(matching:from:name:capacity:overflow:_:)``),
/// so file I/O never runs on a publisher, lines come in publication order, and what waited in the
/// mailbox is written together. Every write, `fsync`, rotation and open on that path (and the
/// group commit's `fsync`) runs on the sink's own ``BlockingIOThread``, never on Swift's
/// cooperative pool: while the disk is slow the mailbox's task is suspended, and other loaders,
/// subscribers and the log go on.
///
/// Its lifecycle is one ``run(on:)`` (a service of a `ServiceGroup` through ``service(on:)``):
/// subscribe, archive, and at the end sync and close. ``archive(_:)``, ``flush()`` and
/// ``close()`` are for code that writes envelopes itself, without a bus; they do their I/O on
/// the caller's thread. Library code: it never prints and never traps.
public final class FileSink: Sendable {
    /// Its name on the bus (stats, failure events, `sink.<name>.torn`).
    public let name: String
    /// The archive's path (`var/events.jsonl`).
    public let path: String
    /// The topics it archives.
    public let patterns: [TopicPattern]
    /// When lines are forced to the disk.
    public let durability: FileSinkDurability
    /// The shortest time between two group commits under ``FileSinkDurability/batch``
    /// (at least 1 ms).
    public let syncEvery: Duration
    /// Size-based rotation, if any.
    public let rotation: FileSinkRotation?
    private let clock: any Clock<Duration>
    /// Where the bus path's file I/O runs.
    let io: BlockingIOThread
    /// The file, its counters and the lifecycle's phase: the sink's one lock.
    let state: SyncLock<State>
    private let mirror: StatisticsMirror

    /// Creates a sink; nothing is opened or written until ``run(on:)`` or ``archive(_:)``.
    ///
    /// - Parameters:
    ///   - syncEvery: the group-commit period for ``FileSinkDurability/batch`` (100 ms by default).
    ///   - clock: the clock the group commit sleeps on (a manual clock in tests).
    public init(name: String = "file", path: String, patterns: [TopicPattern] = [.all],
                durability: FileSinkDurability = .batch, syncEvery: Duration = .milliseconds(100),
                rotation: FileSinkRotation? = nil, clock: any Clock<Duration> = ContinuousClock()) {
        self.name = name
        self.path = path
        self.patterns = patterns
        self.durability = durability
        // A zero period would make the group commit spin.
        self.syncEvery = max(syncEvery, .milliseconds(1))
        self.rotation = rotation
        self.clock = clock
        self.io = BlockingIOThread(name: "herald.sink.\(name)")
        let mirror = StatisticsMirror()
        self.mirror = mirror
        self.state = SyncLock(State(mirror: mirror))
    }

    deinit {
        state.withLock { $0.file?.close() }
    }

    /// Archives `bus`'s events until it is asked to stop: subscribes (one mailbox), opens the
    /// file on its I/O thread (repairing a torn last line, reported on the bus), announces that it
    /// started, and runs the group commit (under ``FileSinkDurability/batch``) as a child task.
    /// A file that cannot be opened yet is not an error here: each event retries, and fails as
    /// `bus.subscriber.failed`.
    ///
    /// Asked to shut down gracefully, it ends the subscription after writing what waits in its
    /// mailbox (a reload that replaces or removes it loses nothing it accepted); cancelled, it
    /// drops what waits. Either way it then forces the written lines to the disk (unless
    /// ``durability`` is ``FileSinkDurability/none``; a sync failure is counted in
    /// ``statistics``) and closes the file, on its I/O thread, and returns.
    ///
    /// - Throws: ``EventBusError`` when the bus refuses the subscription; ``FileSinkError`` when
    ///   the sink runs already.
    public func run(on bus: EventBus) async throws {
        try state.withLock { state throws(FileSinkError) in
            guard state.phase != .running else { throw FileSinkError(.alreadyRunning, path: path) }
            state.phase = .running
        }
        // One pattern is routed by the bus; several share one subscription (one mailbox keeps
        // the lines in publication order) and are checked here.
        let (pattern, filters): (TopicPattern, [TopicPattern]?) = patterns.count == 1 ? (patterns[0], nil) : (.all, patterns)
        let subscription: Subscription
        do {
            subscription = try bus.subscribeInBatches(matching: pattern, name: name, capacity: 4096, overflow: .wait) {
                [self, weak bus] batch in
                let (torn, failures) = await io.run { [self] in archive(batch: batch, filters: filters) }
                for report in torn { _ = try? bus?.post(report) }
                if !failures.isEmpty { throw EventBatchFailures(failures) }
            }
        } catch {
            state.withLock { $0.phase = .closed }
            throw error
        }
        // Opened (and repaired) on the I/O thread; after subscribing, so that the report is archived.
        io.submit { [self, weak bus] in
            if let torn = try? open() { _ = try? bus?.post(torn) }
        }
        await withTaskGroup(of: Void.self) { group in
            if durability == .batch { group.addTask { [self] in await groupCommit() } }
            announceStarted()
            if (try? await gracefulShutdown()) != nil {
                await subscription.drain()
            } else {
                subscription.cancel()
            }
            group.cancelAll()
        }
        // After the batch being written; what is left of a batch in progress is dropped.
        await io.run { [self] in close(phase: .closed) }
    }

    /// Forces written lines to the disk (unless ``durability`` is ``FileSinkDurability/none``)
    /// and closes the file, on the caller's thread; the next ``archive(_:)`` opens it again.
    /// For a sink written through ``archive(_:)``; ``run(on:)`` closes its file itself.
    public func close() {
        close(phase: nil)
    }

    /// Syncs (unless `none`) and closes the file, and enters `phase` if given, under the lock.
    func close(phase: Phase?) {
        let durability = durability
        state.withLock { state in
            if durability != .none { Self.syncIfDirty(&state) }
            state.file?.close()
            state.file = nil
            if let phase { state.phase = phase }
        }
    }

    /// Writes one envelope as a line, opening the file first if needed; under
    /// ``FileSinkDurability/always`` it is on the disk when this returns.
    ///
    /// - Returns: the report of a torn last line, when opening the file repaired one.
    /// - Throws: ``FileSinkError``; nothing partial stays in the file and the next call retries.
    @discardableResult
    public func archive(_ envelope: Envelope<any Event>) throws(FileSinkError) -> FileSinkTornLine? {
        try state.withLock { state throws(FileSinkError) -> FileSinkTornLine? in try archive(envelope, in: &state) }
    }

    /// ``archive(_:)`` under the lock: encodes, writes and (under ``FileSinkDurability/always``)
    /// syncs one line.
    func archive(_ envelope: Envelope<any Event>, in state: inout State) throws(FileSinkError) -> FileSinkTornLine? {
        let (rotation, durability) = (rotation, durability)
        let line: [UInt8]
        do {
            line = try state.encoder.line(for: envelope)
        } catch {
            throw FileSinkError(.encode("\(error)"), path: path)
        }
        let torn = try open(&state)
        do throws(FileSinkError) {
            guard var file = state.file else { return torn }
            state.file = nil
            defer { state.file = file }
            if let rotation, file.size > 0, file.size + line.count > rotation.maxBytes {
                // A decoded policy skips the initializer's clamping.
                try file.rotate(keep: max(0, rotation.keep))
                state.dirty = false
                state.statistics.rotations += 1
            }
            let before = file.size
            try file.append(line[...])
            if durability == .always {
                do throws(FileSinkError) {
                    try file.sync()
                } catch {
                    // Not on the disk, so not delivered: take the line back, and the
                    // event is reported failed rather than half-kept.
                    file.truncate(to: before)
                    throw error
                }
                state.statistics.syncs += 1
            } else {
                state.dirty = true
            }
            state.statistics.lines += 1
            state.statistics.bytes += line.count
        } catch {
            Self.fail(&state, error)
            throw error
        }
        return torn
    }

    /// Forces written lines to the disk now, if any are waiting.
    ///
    /// - Throws: ``FileSinkError`` when `fsync` fails (the file is then reopened by the next event).
    public func flush() throws(FileSinkError) {
        try state.withLock { state throws(FileSinkError) in
            guard state.dirty, let file = state.file else { return }
            do throws(FileSinkError) {
                try file.sync()
            } catch {
                Self.fail(&state, error)
                throw error
            }
            state.dirty = false
            state.statistics.syncs += 1
        }
    }

    /// What the sink has done so far.
    /// Never waits for a write or an fsync in progress.
    public var statistics: Statistics { mirror.copy.withLock { $0 } }

    // MARK: Internals

    struct State {
        var file: JSONLinesFile?
        var dirty = false
        var statistics = Statistics() {
            didSet { mirror.copy.withLock { $0 = statistics } }
        }
        /// Where ``statistics`` is copied to: see ``StatisticsMirror``.
        let mirror: StatisticsMirror
        var encoder = EnvelopeLineEncoder()
        /// The lines of a batch not written yet, reused from batch to batch.
        var pending: [UInt8] = []
        /// Replaces `write(2)` on every file opened from now on (tests force short writes).
        var writeLine: (@Sendable (Int32, UnsafeRawBufferPointer) -> Int)?
        /// Where the lifecycle is: once a run has closed the file, what is left of a batch in
        /// progress is dropped, as queued events are, rather than reopening the file.
        var phase = Phase.idle
    }

    /// The lifecycle of ``FileSink/run(on:)``.
    enum Phase {
        /// Not run yet (or written through ``FileSink/archive(_:)`` only).
        case idle
        /// ``FileSink/run(on:)`` archives the bus's events.
        case running
        /// A run ended and closed the file; a new run may start.
        case closed
    }

    private func open() throws(FileSinkError) -> FileSinkTornLine? {
        try state.withLock { state throws(FileSinkError) in try open(&state) }
    }

    func open(_ state: inout State) throws(FileSinkError) -> FileSinkTornLine? {
        guard state.file == nil else { return nil }
        do {
            var (file, repair) = try JSONLinesFile.open(path: path)
            if let writeLine = state.writeLine { file.writeLine = writeLine }
            state.file = file
            state.dirty = false
            guard let repair else { return nil }
            state.statistics.tornLines += 1
            return FileSinkTornLine(sink: name, path: path, byteCount: repair.byteCount,
                                    movedTo: repair.movedTo, keptBytes: repair.keptBytes)
        } catch {
            Self.fail(&state, error)
            throw error
        }
    }

    /// Counts a failure and drops the descriptor, so the next event reopens (and repairs) the file.
    static func fail(_ state: inout State, _ error: FileSinkError) {
        state.statistics.failures += 1
        state.statistics.lastError = error
        // Lines written before the failure still deserve their sync (a write refused for lack
        // of space leaves the earlier ones intact); best effort, the error is already reported.
        if state.dirty, let file = state.file, (try? file.sync()) != nil { state.statistics.syncs += 1 }
        state.file?.close()
        state.file = nil
        state.dirty = false
    }

    static func syncIfDirty(_ state: inout State) {
        guard state.dirty, let file = state.file else { return }
        do {
            try file.sync()
            state.dirty = false
            state.statistics.syncs += 1
        } catch {
            fail(&state, error)
        }
    }

    /// The group commit: every `syncEvery` by the injected clock, sync what was written since;
    /// until cancelled.
    private func groupCommit() async {
        while (try? await clock.sleep(for: syncEvery)) != nil {
            await io.run { [self] in state.withLock { Self.syncIfDirty(&$0) } }
        }
    }
}
