import Foundation
import HeraldNATS
import HeraldSync
import HeraldTestSupport

/// The NATS rows: JetStream acked publishes and consume+ack against a nats-server the bench
/// starts itself, each beside the same workload through core publish on the same client.
enum NATSWorkloads {
    /// The server of this run, started by ``start()``.
    nonisolated(unsafe) static var server: NATSServerProcess?
    nonisolated(unsafe) static var streams = 0
    static let payload = [UInt8](repeating: UInt8(ascii: "h"), count: 128)
    static let window = 256
    /// The process CPU seconds (getrusage) of the last JetStream run's timed part, for the
    /// comparison with nats.go (whose program measures its own timed part alike).
    nonisolated(unsafe) static var timedCPU = 0.0

    /// Starts nats-server if installed; nil (and the rows are skipped) otherwise.
    @MainActor static func start() async throws -> Bool {
        guard NATSServerProcess.isAvailable else { return false }
        server = try await NATSServerProcess.start(jetStream: true)
        return true
    }

    @MainActor static func stop() async {
        await server?.stop()
        server = nil
    }

    @MainActor static func connect() async throws -> NATSConnection {
        guard let server else { throw NATSError(kind: .closed, message: "no nats-server") }
        let connection = try NATSConnection(servers: [server.url], name: "herald-bench")
        try await connection.connect()
        return connection
    }

    @MainActor static func freshStream(_ js: JetStreamContext) async throws -> (name: String, subject: String) {
        streams += 1
        let name = "BENCH\(streams)"
        _ = try await js.createStream(StreamConfiguration(name: name, subjects: ["bench.\(streams).>"], storage: .file))
        return (name, "bench.\(streams).event")
    }

    /// JetStream publishes, `window` in flight, every ack awaited and checked.
    @MainActor static func jetStreamPublish(_ n: Int) async throws -> Double {
        let connection = try await connect()
        let js = connection.jetStream(timeout: .seconds(60), maxPendingPublishes: window)
        let stream = try await freshStream(js)
        var futures: [JetStreamPublishFuture] = []
        futures.reserveCapacity(n)
        let cpu = HeraldBench.cpuSeconds()
        let start = ContinuousClock.now
        for index in 0..<n {
            futures.append(try await js.publishAsync(stream.subject, payload: payload, options: JetStreamPublishOptions(messageID: "m\(index)")))
        }
        await js.waitForPendingPublishes()
        for future in futures {
            guard try await !future.value.duplicate else { throw NATSError(kind: .invalidResponse, message: "a duplicate ack") }
        }
        let elapsed = start.duration(to: .now)
        timedCPU = HeraldBench.cpuSeconds() - cpu
        let stored = try await js.streamInfo(stream.name).state.messages
        guard stored == UInt64(n) else { throw NATSError(kind: .invalidResponse, message: "the stream holds \(stored) of \(n)") }
        try await js.deleteStream(stream.name)
        await connection.close()
        return Double(n) / elapsed.timeInterval
    }

    /// The same messages through core publish, then a flush (the server has them all).
    @MainActor static func corePublish(_ n: Int) async throws -> Double {
        let connection = try await connect()
        let start = ContinuousClock.now
        for _ in 0..<n { try connection.publish("bench.core.event", payload: payload) }
        try await connection.flush()
        let elapsed = start.duration(to: .now)
        await connection.close()
        return Double(n) / elapsed.timeInterval
    }

    /// Pull-consumes `n` stored messages in batches of `window` and acks each.
    @MainActor static func jetStreamConsume(_ n: Int) async throws -> Double {
        let connection = try await connect()
        let js = connection.jetStream(timeout: .seconds(60), maxPendingPublishes: window)
        let stream = try await freshStream(js)
        for _ in 0..<n { _ = try await js.publishAsync(stream.subject, payload: payload) }
        await js.waitForPendingPublishes()
        var consumer = ConsumerConfiguration(durableName: "bench", ackWait: .seconds(60))
        consumer.maxAckPending = -1
        _ = try await js.createConsumer(stream: stream.name, consumer)
        var received = 0
        let cpu = HeraldBench.cpuSeconds()
        let start = ContinuousClock.now
        while received < n {
            // Never more than remain: a pull for more than is pending waits out its expiry.
            let batch = try await js.fetch(stream: stream.name, consumer: "bench", batch: min(window, n - received), expires: .seconds(5))
            for message in batch { try message.ack() }
            received += batch.count
        }
        try await connection.flush()
        let elapsed = start.duration(to: .now)
        timedCPU = HeraldBench.cpuSeconds() - cpu
        // The server applies acks in the consumer's own time: look again for up to 10 s.
        for attempt in 0... {
            let info = try await js.consumerInfo(stream: stream.name, consumer: "bench")
            if info.numAckPending == 0 { break }
            guard attempt < 200 else { throw NATSError(kind: .invalidResponse, message: "\(info.numAckPending) acks missing") }
            try await Task.sleep(for: .milliseconds(50))
        }
        try await js.deleteStream(stream.name)
        await connection.close()
        return Double(n) / elapsed.timeInterval
    }

    /// The same through core: a subscriber receives `n` messages and publishes a reply for each.
    @MainActor static func coreConsume(_ n: Int) async throws -> Double {
        let publisher = try await connect()
        let consumer = try await connect()
        let subscription = try consumer.subscribe("bench.core.consume")
        try await consumer.flush()
        let start = ContinuousClock.now
        let receiving = Task {
            var received = 0
            for await _ in subscription {
                try consumer.publish("bench.core.ack", payload: Array("+ACK".utf8))
                received += 1
                if received == n { break }
            }
            return received
        }
        for _ in 0..<n { try publisher.publish("bench.core.consume", payload: payload) }
        let received = try await receiving.value
        try await consumer.flush()
        let elapsed = start.duration(to: .now)
        guard received == n else { throw NATSError(kind: .invalidResponse, message: "received \(received) of \(n)") }
        await publisher.close()
        await consumer.close()
        return Double(n) / elapsed.timeInterval
    }
}
