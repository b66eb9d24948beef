import Foundation
import Herald
import HeraldIO
import HeraldLifecycle
import HeraldSandbox
import HeraldSubscribers

extension ArchiveReplay {
    /// How `--post` ended, per post subscriber.
    public struct Posted: Sendable, Hashable {
        /// The post subscriber.
        public var subscriber: String
        /// Posts sent (a duplicate the service recognised counts as sent).
        public var sent: Int
        /// Posts given up, with why (`rule key: reason`).
        public var failures: [String]
    }

    /// Posts what the plan found through each rule's outbox, exactly once: the archived
    /// envelopes go through a post scheduler on that outbox as if the daemon saw them again, with
    /// their own ids and senders, so a key the outbox knows (sent, failed or pending) is not made
    /// again. Intents the outbox still held from before are sent too (the scheduler resumes them).
    /// A service pointing at the embedded sandbox gets one for this run only.
    ///
    /// - Throws: ``DaemonError`` when a scheduler or the sandbox cannot start.
    public func post(_ plan: Plan, daemon: HeraldDaemon) async throws(DaemonError) -> [Posted] {
        var sandbox: Sandbox?
        if rules.contains(where: { configuration.services[$0.rule.service]?.endpoint == .sandbox }) {
            do {
                sandbox = try await Sandbox.start(configuration.sandboxConfiguration())
            } catch {
                throw DaemonError("cannot start the sandbox: \(error)")
            }
        }
        var results: [Posted] = []
        do throws(DaemonError) {
            for subscriber in Array(Set(rules.map(\.subscriber))).sorted() {
                let selected = rules.filter { $0.subscriber == subscriber }
                guard var posting = selected.first?.posting else { continue }
                posting.rules = selected.map(\.rule)
                results.append(try await post(plan.envelopes, subscriber: subscriber, posting: posting, daemon: daemon, sandbox: sandbox))
            }
        } catch {
            await sandbox?.stop()
            throw error
        }
        await sandbox?.stop()
        return results
    }

    private func post(_ envelopes: [Envelope<any Event>], subscriber: String, posting: PostingSettings, daemon: HeraldDaemon,
                      sandbox: Sandbox?) async throws(DaemonError) -> Posted {
        // No loader runs here: the outbox has a thread of its own.
        let scheduler = try daemon.makePostScheduler(subscriber, posting, sandbox: sandbox, io: BlockingIOThread(name: "herald.outbox-io"))
        let bus = EventBus()
        // The outcomes, counted once the posts are done.
        let (outcomes, continuation) = AsyncStream.makeStream(of: (any Event).self)
        let watch: Subscription
        do {
            watch = try bus.subscribe(matching: "post.>", name: "replay") { envelope in continuation.yield(envelope.event) }
        } catch {
            throw DaemonError("subscribers.\(subscriber): cannot start: \(error)")
        }
        // The scheduler runs as a service of a group of its own, until the posts are done.
        let (events, reporter) = AsyncStream.makeStream(of: ServiceGroup.Event.self)
        let group = ServiceGroup([.init("subscribers.\(subscriber)", scheduler.service(on: bus))], onEvent: { reporter.yield($0) })
        let running = Task { () -> ServiceGroupError? in
            do throws(ServiceGroupError) {
                try await group.run()
                return nil
            } catch {
                return error
            }
        }
        var started = false
        for await event in events {
            started = event == .started
            break
        }
        guard started else {
            let failure = await running.value
            throw DaemonError("subscribers.\(subscriber): cannot start: \(failure?.underlying.map { "\($0)" } ?? failure?.description ?? "stopped")")
        }
        var result = Posted(subscriber: subscriber, sent: 0, failures: [])
        do {
            for envelope in envelopes { try scheduler.submit(envelope) }
        } catch {
            result.failures.append("cannot submit an event: \(error)")
        }
        // Until every intent is sent or given up (the scheduler says when nothing waits), or the
        // group stops (the scheduler failed).
        await withTaskGroup(of: Void.self) { wait in
            wait.addTask { await scheduler.waitUntilIdle() }
            wait.addTask {
                for await event in events {
                    if case .stopping = event { return }
                }
            }
            await wait.next()
            wait.cancelAll()
        }
        // Each outcome was published before its post stopped waiting: the bus has routed every
        // one to the watch, which counts them all once drained.
        await watch.drain()
        continuation.finish()
        for await event in outcomes { Self.count(event, into: &result) }
        // Cancelling the group's task asks it to stop gracefully.
        running.cancel()
        if let failure = await running.value { result.failures.append("\(failure)") }
        _ = await bus.shutdown(timeout: .seconds(1))
        return result
    }

    private static func count(_ event: any Event, into result: inout Posted) {
        switch event {
        case is PostSent: result.sent += 1
        case let failed as PostFailed where failed.attempts > 0 || failed.key != nil:
            result.failures.append("\(failed.rule) \(failed.key ?? "-"): \(failed.reason)")
        default: break
        }
    }
}
