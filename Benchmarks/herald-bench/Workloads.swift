import Foundation
import Herald
import Synchronization

/// The event every workload publishes.
struct Ping: Event {
    static let topic: Topic = "loader.home.finished"
    var topic: Topic { Self.topic }
    var value: Int
}

/// An event on a topic of its own, for subscriptions that must not match.
struct Other: Event {
    let topic: Topic
}

/// A counter the handlers bump. `@unchecked Sendable`: inline handlers run on the single
/// publishing thread; queued ones use `Atomic`.
final class Counter: @unchecked Sendable {
    var value = 0
}

final class AtomicCounter: Sendable {
    let value = Atomic<Int>(0)
}

final class MessageSubject: Sendable {}

struct PingMessage: NotificationCenter.AsyncMessage {
    typealias Subject = MessageSubject
    var value: Int
}

/// Each workload returns events per second for Herald and for its baseline.
enum Workloads {
    static let pingName = Notification.Name("bench.ping")

    // MARK: sync

    static func heraldSyncFanout(_ n: Int, subscribers: Int, others: Int) throws -> Double {
        let bus = EventBus()
        let counter = Counter()
        var tokens: [Subscription] = []
        for i in 0..<others {
            tokens.append(try bus.subscribe(to: Other.self, on: TopicPattern(validating: "other.\(i)")) { _ in counter.value += 1 })
        }
        for _ in 0..<subscribers {
            tokens.append(try bus.subscribe(to: Ping.self) { event in counter.value &+= event.value })
        }
        let start = ContinuousClock.now
        for i in 0..<n { try bus.post(Ping(value: i & 1)) }
        let elapsed = ContinuousClock.now - start
        withExtendedLifetime(tokens) {}
        return rate(n, elapsed)
    }

    static func notificationCenterFanout(_ n: Int, observers: Int, others: Int) -> Double {
        let center = NotificationCenter()
        let counter = Counter()
        var tokens: [any NSObjectProtocol] = []
        for i in 0..<others {
            tokens.append(center.addObserver(forName: Notification.Name("other.\(i)"), object: nil, queue: nil) { _ in counter.value += 1 })
        }
        for _ in 0..<observers {
            tokens.append(center.addObserver(forName: pingName, object: nil, queue: nil) { note in
                counter.value &+= (note.userInfo?["value"] as? Int) ?? 0
            })
        }
        let start = ContinuousClock.now
        for i in 0..<n { center.post(name: pingName, object: nil, userInfo: ["value": i & 1]) }
        let elapsed = ContinuousClock.now - start
        for token in tokens { center.removeObserver(token) }
        return rate(n, elapsed)
    }

    // MARK: async

    static func heraldQueuedFanout(_ n: Int, subscribers: Int) async throws -> Double {
        let bus = EventBus()
        let counter = AtomicCounter()
        var tokens: [Subscription] = []
        for _ in 0..<subscribers {
            tokens.append(try bus.subscribe(to: Ping.self, delivery: .queued(capacity: 4096)) { event in
                counter.value.add(event.value, ordering: .relaxed)
            })
        }
        let start = ContinuousClock.now
        for i in 0..<n { try await bus.publish(Ping(value: i & 1)) }
        let report = await bus.shutdown(timeout: .seconds(60))
        let elapsed = ContinuousClock.now - start
        guard report.drained, counter.value.load(ordering: .relaxed) == subscribers * (n / 2) else {
            throw BenchmarkError.lostEvents("queued fanout: \(counter.value.load(ordering: .relaxed)) of \(subscribers * (n / 2))")
        }
        withExtendedLifetime(tokens) {}
        return rate(n, elapsed)
    }

    static func asyncStreamFanout(_ n: Int, consumers: Int) async throws -> Double {
        var continuations: [AsyncStream<Int>.Continuation] = []
        var tasks: [Task<Int, Never>] = []
        for _ in 0..<consumers {
            let (stream, continuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .unbounded)
            continuations.append(continuation)
            tasks.append(Task {
                var sum = 0
                for await value in stream { sum &+= value }
                return sum
            })
        }
        let start = ContinuousClock.now
        for i in 0..<n {
            for continuation in continuations { continuation.yield(i & 1) }
        }
        for continuation in continuations { continuation.finish() }
        var total = 0
        for task in tasks { total += await task.value }
        let elapsed = ContinuousClock.now - start
        guard total == consumers * (n / 2) else { throw BenchmarkError.lostEvents("AsyncStream: \(total)") }
        return rate(n, elapsed)
    }

    /// NotificationCenter's `AsyncMessage`, from one poster to one observer, with at most
    /// `window` messages posted and not yet observed: the bound Herald's side has (a mailbox of
    /// 4,096 with backpressure). Without it the messages pile up, and AsyncMessage slows as they
    /// do (here 20,000 posted at once went at 200-570 k/s, 200,000 at ~150 k/s, 1,000,000 at
    /// 32-42 k/s), so a figure would depend on how many events the row runs.
    static func asyncMessage(_ n: Int, window: Int = 4096) async throws -> Double {
        let center = NotificationCenter()
        let subject = MessageSubject()
        let counter = AtomicCounter()
        let chunk = window / 2
        let (progress, report) = AsyncStream<Int>.makeStream(bufferingPolicy: .unbounded)
        let token = center.addObserver(of: subject, for: PingMessage.self) { message in
            let seen = counter.value.add(1, ordering: .relaxed).newValue
            if seen % chunk == 0 || seen == n { report.yield(seen) }
        }
        var observed = 0
        var reports = progress.makeAsyncIterator()
        let start = ContinuousClock.now
        var posted = 0
        while posted < n {
            // Post a chunk once no more than one chunk is outstanding: at most `window` in all.
            while observed < posted - chunk {
                guard let seen = await reports.next() else { break }
                observed = seen
            }
            let end = min(posted + chunk, n)
            while posted < end {
                center.post(PingMessage(value: posted), subject: subject)
                posted += 1
            }
        }
        while observed < n {
            guard let seen = await reports.next() else { break }
            observed = seen
        }
        let elapsed = ContinuousClock.now - start
        center.removeObserver(token)
        guard counter.value.load(ordering: .relaxed) == n else {
            throw BenchmarkError.lostEvents("AsyncMessage: \(counter.value.load(ordering: .relaxed)) of \(n)")
        }
        return rate(n, elapsed)
    }

    // MARK: routing

    static func heraldWildcard(_ n: Int, nonMatching: Int) throws -> Double {
        let (bus, tokens) = try wildcardBus(nonMatching: nonMatching)
        let start = ContinuousClock.now
        for i in 0..<n { try bus.post(Ping(value: i)) }
        let elapsed = ContinuousClock.now - start
        withExtendedLifetime(tokens) {}
        return rate(n, elapsed)
    }

    /// Every publish follows a subscribe and a cancel elsewhere, so its route is rebuilt from the
    /// trie each time: the cost of matching, not of the route cache.
    static func heraldRouteChurn(_ n: Int, nonMatching: Int) throws -> Double {
        let (bus, tokens) = try wildcardBus(nonMatching: nonMatching)
        let start = ContinuousClock.now
        for i in 0..<n {
            try bus.subscribe(matching: "elsewhere.>") { _ in }.cancel()
            try bus.post(Ping(value: i))
        }
        let elapsed = ContinuousClock.now - start
        withExtendedLifetime(tokens) {}
        return rate(n, elapsed)
    }

    /// `nonMatching` patterns `loader.<i>.*` that never match a ping, and one that does.
    static func wildcardBus(nonMatching: Int) throws -> (EventBus, [Subscription]) {
        let bus = EventBus()
        let counter = Counter()
        var tokens: [Subscription] = []
        for i in 0..<nonMatching {
            tokens.append(try bus.subscribe(matching: TopicPattern(validating: "loader.\(i).*")) { _ in counter.value += 1 })
        }
        tokens.append(try bus.subscribe(matching: "loader.home.*") { envelope in counter.value &+= envelope.sequence == 0 ? 1 : 0 })
        return (bus, tokens)
    }

    static func rate(_ n: Int, _ elapsed: Duration) -> Double {
        Double(n) / max(elapsed.timeInterval, 1e-9)
    }
}

enum BenchmarkError: Error, CustomStringConvertible {
    case lostEvents(String)
    var description: String {
        switch self { case .lostEvents(let what): "events lost: \(what)" }
    }
}

/// What a publish to one queued subscriber costs the publisher alone: events go out in rounds
/// of 50,000 while nothing takes them, into a stream's mailbox (the same queued publish as a
/// queued handler's, with no consumer running beside it), then the stream is drained. The best
/// round counts; the buffers are warm after the first.
enum PublishCostWorkloads {
    static func heraldStream(_ n: Int) async throws -> Double {
        let bus = EventBus()
        let round = min(n, 50_000)
        let stream = try bus.events(of: Ping.self, capacity: round + 10)
        var iterator = stream.makeAsyncIterator()
        var best = 0.0
        for _ in 0..<max(n / round, 2) {
            let start = ContinuousClock.now
            for i in 0..<round { try await bus.publish(Ping(value: i & 1)) }
            best = max(best, Workloads.rate(round, ContinuousClock.now - start))
            for _ in 0..<round {
                guard await iterator.next() != nil else { throw BenchmarkError.lostEvents("publish cost: stream ended") }
            }
        }
        _ = await bus.shutdown(timeout: .seconds(60))
        return best
    }

    /// The same with an AsyncStream.
    static func asyncStream(_ n: Int) async throws -> Double {
        let round = min(n, 50_000)
        let (stream, continuation) = AsyncStream<Int>.makeStream(bufferingPolicy: .unbounded)
        var iterator = stream.makeAsyncIterator()
        var best = 0.0
        for _ in 0..<max(n / round, 2) {
            let start = ContinuousClock.now
            for i in 0..<round { continuation.yield(i & 1) }
            best = max(best, Workloads.rate(round, ContinuousClock.now - start))
            for _ in 0..<round {
                guard await iterator.next() != nil else { throw BenchmarkError.lostEvents("AsyncStream: ended") }
            }
        }
        continuation.finish()
        return best
    }
}
