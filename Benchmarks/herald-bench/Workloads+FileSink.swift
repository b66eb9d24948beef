import Foundation
import Herald
import HeraldSubscribers
import HeraldTestSupport

/// `sink.file`: archiving every event as a JSON line, through the bus and a ``FileSink``
/// against encoding and writing the same lines by hand.
extension Workloads {
    static func heraldFileSink(_ n: Int, durability: FileSinkDurability) async throws -> Double {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bus = EventBus()
        let sink = FileSink(path: directory.appendingPathComponent("events.jsonl").path, durability: durability)
        let running = await RunningGroup("sink", sink.service(on: bus))
        let start = ContinuousClock.now
        for i in 0..<n { try await bus.publish(Ping(value: i)) }
        let report = await bus.shutdown(timeout: .seconds(300))
        await running.stop()
        let elapsed = ContinuousClock.now - start
        let statistics = sink.statistics
        guard report.drained, statistics.lines >= n, statistics.failures == 0 else {
            throw BenchmarkError.lostEvents("file sink: \(statistics.lines) lines of \(n), \(statistics.failures) failures")
        }
        return rate(n, elapsed)
    }

    static func fileHandlePerEvent(_ n: Int) throws -> Double {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("events.jsonl")
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw BenchmarkError.lostEvents("cannot create \(url.path)")
        }
        let handle = try FileHandle(forWritingTo: url)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date))
        }
        let bus = UUID()
        let start = ContinuousClock.now
        for i in 0..<n {
            let id = EventID(bus: bus, sequence: UInt64(i + 1))
            let envelope = Envelope<any Event>(topic: Ping.topic, sender: nil, id: id, correlationID: id,
                                               timestamp: Date(), event: Ping(value: i))
            var line = try encoder.encode(envelope)
            line.append(0x0A)
            try handle.write(contentsOf: line)
        }
        try handle.close()
        return rate(n, ContinuousClock.now - start)
    }

    private static func scratchDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("herald-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
