@testable import HeraldNATS
import Testing

/// The connection's decisions alone, without a socket, a thread or a server: each transition of
/// ``ConnectionMachine`` (and its ``ConnectionMachine/Liveness``) and what it tells the
/// connection to do. Time is given as instants; continuations come from parked tasks
/// (``Waiter``), so a test can check which ones the machine hands back and resume them.
@Suite struct ConnectionMachineTests {
    typealias Machine = ConnectionMachine

    /// A task suspended on a checked continuation the test hands to the machine.
    struct Waiter {
        let continuation: CheckedContinuation<Void, any Error>
        let task: Task<NATSError.Kind?, Never>

        static func make() async -> Waiter {
            let (stream, out) = AsyncStream.makeStream(of: CheckedContinuation<Void, any Error>.self)
            let task = Task<NATSError.Kind?, Never> {
                do {
                    try await withCheckedThrowingContinuation { out.yield($0) }
                    return nil
                } catch {
                    return (error as? NATSError)?.kind ?? .invalidResponse
                }
            }
            var iterator = stream.makeAsyncIterator()
            return Waiter(continuation: await iterator.next()!, task: task)
        }

        func isSame(_ other: CheckedContinuation<Void, any Error>) -> Bool {
            withUnsafeBytes(of: continuation) { Array($0) } == withUnsafeBytes(of: other) { Array($0) }
        }

        /// Whether `list` is exactly these waiters, in this order.
        static func same(_ list: [CheckedContinuation<Void, any Error>], as waiters: [Waiter]) -> Bool {
            list.count == waiters.count && zip(list, waiters).allSatisfy { $1.isSame($0) }
        }

        /// Resumes it (if the test has not) and returns how it ended: nil on success.
        func end(resuming: Bool = true) async -> NATSError.Kind? {
            if resuming { continuation.resume() }
            return await task.value
        }
    }

    static let t0 = ContinuousClock.now

    static func policy(allowReconnect: Bool = true, maxReconnectAttempts: Int? = nil, retryOnFailedConnect: Bool = false,
                       healthyUptime: Duration = .seconds(2)) -> Machine.Policy {
        var policy = Machine.Policy()
        policy.allowReconnect = allowReconnect
        policy.maxReconnectAttempts = maxReconnectAttempts
        policy.retryOnFailedConnect = retryOnFailedConnect
        policy.healthyUptime = healthyUptime
        return policy
    }

    /// A machine whose first connection is up at `t0` (the start waiter resumed).
    static func connectedMachine(_ policy: Machine.Policy = policy()) async -> Machine {
        var m = Machine(policy: policy)
        let waiter = await Waiter.make()
        _ = m.start(waiter.continuation)
        _ = m.connected(at: t0)
        #expect(await waiter.end() == nil)
        return m
    }

    /// A connection that answered its health PING and stayed up long enough, then dropped.
    static func healthyDrop(_ m: inout Machine, at start: ContinuousClock.Instant) -> Machine.NextStep {
        _ = m.connected(at: start)
        _ = m.pongReceived()
        return m.disconnected(from: "a:4222", reason: "EOF", at: start.advanced(by: .seconds(10))).next
    }

    // MARK: - Starting

    @Test func theFirstCallerStartsTheThreadAndEveryCallerIsResumedOnceConnected() async {
        var m = Machine()
        #expect(m.phase == .idle && m.isStarting)
        let first = await Waiter.make(), second = await Waiter.make()
        guard case .startThread = m.start(first.continuation) else { Issue.record("idle: start the thread"); return }
        #expect(m.phase == .connecting)
        guard case .wait = m.start(second.continuation) else { Issue.record("connecting: wait"); return }
        let connected = m.connected(at: Self.t0)
        #expect(connected?.first == true)
        #expect(connected.map { Waiter.same($0.waiters, as: [first, second]) } == true)
        #expect(m.phase == .connected && m.isConnected && !m.isStarting)
        let late = await Waiter.make()
        guard case .resume(let now) = m.start(late.continuation), late.isSame(now) else {
            Issue.record("connected: resume at once"); return
        }
        for waiter in [first, second, late] { #expect(await waiter.end() == nil) }
    }

    @Test func aCallerAfterCloseIsFailed() async {
        var m = Machine()
        _ = m.close()
        let waiter = await Waiter.make()
        guard case .fail(let failed) = m.start(waiter.continuation) else { Issue.record("closing: fail"); return }
        failed.resume(throwing: NATSError.closed)
        #expect(await waiter.end(resuming: false) == .closed)
    }

    @Test func aSecondConnectionIsNotTheFirst() async {
        var m = await Self.connectedMachine()
        _ = m.disconnected(from: "a:4222", reason: "EOF", at: Self.t0)
        #expect(m.phase == .reconnecting)
        let again = m.connected(at: Self.t0)
        #expect(again?.first == false && again?.waiters.isEmpty == true)
    }

    // MARK: - Closing

    @Test func closeBeforeStartFinishesWithoutAThread() {
        var m = Machine()
        #expect(m.close() == .finishHere)
        #expect(m.phase == .closing && m.isClosing && !m.isAcceptingWork)
        #expect(m.close() == .waitForThread, "a second close waits for the first")
    }

    @Test func closeOfARunningConnectionWakesTheThreadAndWaitsUntilItFinishes() async {
        var m = await Self.connectedMachine()
        #expect(m.close() == .wakeThread)
        let (stream, out) = AsyncStream.makeStream(of: CheckedContinuation<Void, Never>.self)
        let waiting = Task { await withCheckedContinuation { out.yield($0) } }
        var iterator = stream.makeAsyncIterator()
        let continuation = await iterator.next()!
        #expect(m.waitForClose(continuation) == nil, "kept until the thread finishes")
        let finished = m.finish()
        #expect(m.phase == .closed)
        #expect(finished.closeWaiters.count == 1)
        for waiter in finished.closeWaiters { waiter.resume() }
        await waiting.value
        #expect(m.close() == .none, "closed: nothing to do")
    }

    @Test func waitingForCloseAfterTheEndGoesOnAtOnce() async {
        var m = Machine()
        _ = m.finish()
        let (stream, out) = AsyncStream.makeStream(of: CheckedContinuation<Void, Never>.self)
        let waiting = Task { await withCheckedContinuation { out.yield($0) } }
        var iterator = stream.makeAsyncIterator()
        let continuation = await iterator.next()!
        let now = m.waitForClose(continuation)
        #expect(now != nil)
        now?.resume()
        await waiting.value
    }

    @Test func shutdownEndsAConnectionNobodyWaitsFor() async {
        var idle = Machine()
        #expect(idle.shutdown() == .finishHere)
        var running = await Self.connectedMachine()
        #expect(running.shutdown() == .wakeThread)
        #expect(running.shutdown() == .wakeThread, "pokes the thread again")
        _ = running.finish()
        #expect(running.shutdown() == .none)
    }

    @Test func aCloseDuringTheHandshakeWinsAndLeavesTheWaitersToFinish() async {
        var m = Machine()
        let waiter = await Waiter.make()
        _ = m.start(waiter.continuation)
        #expect(m.close() == .wakeThread)
        #expect(m.connected(at: Self.t0) == nil, "the close wins")
        #expect(m.phase == .closing)
        let finished = m.finish()
        #expect(Waiter.same(finished.connectWaiters, as: [waiter]))
        for continuation in finished.connectWaiters { continuation.resume(throwing: NATSError.closed) }
        #expect(await waiter.end(resuming: false) == .closed)
    }

    @Test func finishFailsFlushesThatWaitForTheirPong() async {
        var m = await Self.connectedMachine()
        let flush = await Waiter.make()
        guard case .sendPing = m.flush(flush.continuation) else { Issue.record("connected: ping"); return }
        let finished = m.finish()
        #expect(Waiter.same(finished.flushWaiters, as: [flush]))
        #expect(m.pongWaiters.isEmpty)
        for continuation in finished.flushWaiters { continuation.resume(throwing: NATSError.closed) }
        #expect(await flush.end(resuming: false) == .closed)
    }

    // MARK: - PONGs

    @Test func flushSendsAPingOnlyWhileConnected() async {
        var m = Machine()
        for expected in [NATSError.Kind.notConnected, .closed] {
            let waiter = await Waiter.make()
            guard case .fail(let error) = m.flush(waiter.continuation) else { Issue.record("not connected: fail"); return }
            #expect(error.kind == expected)
            waiter.continuation.resume(throwing: error)
            #expect(await waiter.end(resuming: false) == expected)
            _ = m.close()
        }
    }

    @Test func pongsAnswerTheirPingsInOrderAndTheHealthPongClearsTheProblem() async {
        var m = Machine()
        let start = await Waiter.make()
        _ = m.start(start.continuation)
        #expect(m.attemptFailed(server: "a:4222", message: "connection refused", serverCount: 2) == .reconnect)
        #expect(m.problem == "a:4222: connection refused")
        _ = m.connected(at: Self.t0)
        #expect(await start.end() == nil)
        let flush = await Waiter.make()
        _ = m.flush(flush.continuation)
        m.keepAlivePingSent()
        #expect(m.problem != nil, "the cause stays until the connection proves healthy")
        #expect(m.pongReceived() == nil, "the health PONG comes first")
        #expect(m.isHealthy && m.problem == nil)
        let answered = m.pongReceived()
        #expect(answered.map(flush.isSame) == true)
        answered?.resume()
        #expect(await flush.end(resuming: false) == nil)
        #expect(m.pongReceived() == nil, "the keep-alive's")
        #expect(m.pongReceived() == nil, "none waits: ignored")
    }

    /// The client's own connection errors name their server already; the problem said it twice
    /// ("a:4222: a:4222: Connection reset by peer").
    @Test func aCauseThatNamesItsServerNamesItOnce() async {
        var m = await Self.connectedMachine()
        _ = m.disconnected(from: "a:4222", reason: "a:4222: Connection reset by peer (errno 104)", at: Self.t0)
        #expect(m.problem == "a:4222: Connection reset by peer (errno 104)")
        _ = m.attemptFailed(server: "a:4222", message: "a:4222: Connection refused (errno 111)", serverCount: 2)
        #expect(m.problem == "a:4222: Connection refused (errno 111)")
        // Another server's name in the text is not this one's.
        _ = m.attemptFailed(server: "b:4222", message: "a:4222: refused", serverCount: 2)
        #expect(m.problem == "b:4222: a:4222: refused")
    }

    // MARK: - Losing a connection, and the backoff

    @Test func aLostConnectionFailsItsFlushesAndKeepsTheCause() async {
        var m = await Self.connectedMachine()
        let flush = await Waiter.make()
        _ = m.flush(flush.continuation)
        let lost = m.disconnected(from: "a:4222", reason: "the server closed the connection", at: Self.t0)
        #expect(Waiter.same(lost.failPongs, as: [flush]))
        #expect(lost.next == .reconnect)
        #expect(m.phase == .reconnecting && m.isAcceptingWork)
        #expect(m.problem == "a:4222: the server closed the connection")
        for continuation in lost.failPongs { continuation.resume(throwing: NATSError.notConnected) }
        #expect(await flush.end(resuming: false) == .notConnected)
        let next = await Waiter.make()
        guard case .fail(let error) = m.flush(next.continuation) else { Issue.record("reconnecting: fail"); return }
        #expect(error.kind == .notConnected)
        next.continuation.resume(throwing: error)
        _ = await next.end(resuming: false)
    }

    @Test func aCloseAsTheConnectionDropsWins() async {
        var m = await Self.connectedMachine()
        _ = m.close()
        _ = m.disconnected(from: "a:4222", reason: "EOF", at: Self.t0)
        #expect(m.phase == .closing)
    }

    @Test func theBackoffRestartsOnlyAfterAHealthyConnection() async {
        var m = await Self.connectedMachine()
        // Healthy: the health PONG came and it stayed up for the healthy uptime.
        _ = m.pongReceived()
        #expect(m.disconnected(from: "a:4222", reason: "EOF", at: Self.t0.advanced(by: .seconds(2))).next == .reconnect)
        #expect(m.failures == 0)
        #expect(m.nextAttempt(serverCount: 1).failures == 0, "reconnect at once")

        // Answered the PING but dropped too soon.
        _ = m.connected(at: Self.t0)
        _ = m.pongReceived()
        _ = m.disconnected(from: "a:4222", reason: "EOF", at: Self.t0.advanced(by: .seconds(1)))
        #expect(m.failures == 1)

        // Stayed up long, but never answered the PING.
        _ = m.connected(at: Self.t0)
        _ = m.disconnected(from: "a:4222", reason: "garbage", at: Self.t0.advanced(by: .seconds(60)))
        #expect(m.failures == 2)
        #expect(m.nextAttempt(serverCount: 1).failures == 2, "the backoff grows")

        #expect(Self.healthyDrop(&m, at: Self.t0) == .reconnect)
        #expect(m.failures == 0)
    }

    @Test func reconnectAttemptsAreBoundedAndTheFinalReasonNamesTheLastCause() async {
        var m = await Self.connectedMachine(Self.policy(maxReconnectAttempts: 3))
        _ = m.disconnected(from: "a:4222", reason: "EOF", at: Self.t0)  // not healthy: 1
        #expect(m.attemptFailed(server: "b:4222", message: "connection refused", serverCount: 2) == .reconnect)
        let last = m.attemptFailed(server: "a:4222", message: "connection timed out", serverCount: 2)
        #expect(last == .giveUp(reason: "3 reconnect attempts failed; the last: connection timed out", connectError: nil))
        #expect(m.problem == "a:4222: connection timed out")
    }

    @Test func connectionsThatDropAtOnceCountTowardsTheLimit() async {
        var m = await Self.connectedMachine(Self.policy(maxReconnectAttempts: 2))
        #expect(m.disconnected(from: "a:4222", reason: "EOF", at: Self.t0).next == .reconnect)
        _ = m.connected(at: Self.t0)
        let next = m.disconnected(from: "a:4222", reason: "the server sent bytes that are not the NATS protocol", at: Self.t0).next
        #expect(next == .giveUp(reason: "2 reconnect attempts failed; the last: a:4222: the server sent bytes that are not the NATS protocol",
                                connectError: nil))
    }

    @Test func noReconnectGivesUpAtTheFirstDrop() async {
        var m = await Self.connectedMachine(Self.policy(allowReconnect: false))
        let next = m.disconnected(from: "a:4222", reason: "EOF", at: Self.t0).next
        #expect(next == .giveUp(reason: "disconnected and reconnecting is off: EOF", connectError: nil))
    }

    @Test func theFirstConnectionFailsWithEveryServersReasonOnceEachRefused() {
        var m = Machine()
        #expect(m.nextAttempt(serverCount: 2) == (0, 0))
        #expect(m.attemptFailed(server: "a:4222", message: "a:4222: connection refused", serverCount: 2) == .reconnect)
        #expect(m.nextAttempt(serverCount: 2) == (1, 1))
        let next = m.attemptFailed(server: "b:4222", message: "b:4222: no route to host", serverCount: 2)
        let reason = "no server accepted the connection: a:4222: connection refused; b:4222: no route to host"
        #expect(next == .giveUp(reason: reason, connectError: .connectionFailed(reason)))
    }

    @Test func retryingAFailedFirstConnectionGoesOnRoundTheServers() {
        var m = Machine(policy: Self.policy(retryOnFailedConnect: true))
        for attempt in 0..<5 {
            #expect(m.nextAttempt(serverCount: 2) == (attempt % 2, attempt))
            #expect(m.attemptFailed(server: "s", message: "refused", serverCount: 2) == .reconnect)
        }
        #expect(m.failures == 5 && !m.everConnected)
    }

    // MARK: - Liveness

    @Test func aPingGoesOutEachIntervalAndAPongAnswersThem() {
        var liveness = Machine.Liveness(interval: .seconds(10), maxOutstanding: 2, from: Self.t0)
        #expect(liveness.nextPing == Self.t0.advanced(by: .seconds(10)))
        #expect(liveness.tick(at: Self.t0.advanced(by: .seconds(9))) == .none)
        #expect(liveness.tick(at: Self.t0.advanced(by: .seconds(10))) == .ping)
        #expect(liveness.outstanding == 1 && liveness.nextPing == Self.t0.advanced(by: .seconds(20)))
        liveness.pong()
        #expect(liveness.outstanding == 0)
    }

    @Test func unansweredPingsMakeTheConnectionStale() {
        var liveness = Machine.Liveness(interval: .seconds(10), maxOutstanding: 2, from: Self.t0)
        #expect(liveness.tick(at: Self.t0.advanced(by: .seconds(10))) == .ping)
        #expect(liveness.tick(at: Self.t0.advanced(by: .seconds(20))) == .ping)
        #expect(liveness.tick(at: Self.t0.advanced(by: .seconds(30)))
                == .stale("the server did not answer 2 pings (stale connection)"))
    }

    @Test func aTimedOutRequestPingsAtOnceUnlessAPingIsOutstanding() {
        var liveness = Machine.Liveness(interval: .seconds(10), maxOutstanding: 2, from: Self.t0)
        let late = Self.t0.advanced(by: .seconds(3))
        let pinged = liveness.requestTimedOut(at: late)
        #expect(pinged)
        #expect(liveness.outstanding == 1 && liveness.nextPing == late.advanced(by: .seconds(10)))
        let again = liveness.requestTimedOut(at: late)
        #expect(!again, "one is outstanding")
        #expect(liveness.tick(at: late.advanced(by: .seconds(10))) == .ping)
        #expect(liveness.tick(at: late.advanced(by: .seconds(20))) == .stale("the server did not answer 2 pings (stale connection)"),
                "a failed request counts towards the stale connection")
    }
}
