import HeraldSync
import Foundation
import Herald
@testable import HeraldSubscribers
import Synchronization
import HeraldTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The sink's batch path: the lines of a mailbox's batch written together.
@Suite struct FileSinkBatchTests {
    static func envelopes(_ count: Int, from first: Int = 1) -> [Envelope<any Event>] {
        (first..<first + count).map { FileSinkTests.envelope(UInt64($0), "\($0)") }
    }

    /// Counts the sink's `write(2)` calls, and lets `refuse` answer some itself (it gets the
    /// descriptor, to write part of the bytes as a full disk would).
    final class Writes: Sendable {
        let sizes = SyncLock<[Int]>([])
        let refuse: @Sendable (Int32, UnsafeRawBufferPointer) -> Int?

        init(refuse: @escaping @Sendable (Int32, UnsafeRawBufferPointer) -> Int? = { _, _ in nil }) {
            self.refuse = refuse
        }

        func install(in sink: FileSink) {
            sink.state.withLock { state in
                state.writeLine = { [self] descriptor, buffer in
                    sizes.withLock { $0.append(buffer.count) }
                    if let written = refuse(descriptor, buffer) { return written }
                    return systemWrite(descriptor, buffer.baseAddress, buffer.count)
                }
            }
        }
    }

    @Test(arguments: [FileSinkDurability.none, .batch])
    func aBatchsLinesGoOutInOneWrite(durability: FileSinkDurability) throws {
        let directory = try FileSinkTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        let sink = FileSink(path: path, durability: durability)
        let writes = Writes()
        writes.install(in: sink)
        let (torn, failures) = sink.archive(batch: Self.envelopes(20), filters: nil)
        sink.close()
        #expect(torn.isEmpty && failures.isEmpty)
        #expect(writes.sizes.withLock { $0.count } == 1)
        #expect(try FileSinkTests.notes(path) == (1...20).map { "\($0)" })
        #expect(sink.statistics.lines == 20)
        #expect(sink.statistics.bytes == writes.sizes.withLock { $0.reduce(0, +) })
        #expect(sink.statistics.syncs == (durability == .batch ? 1 : 0), "one sync at stop under batch")
    }

    @Test func underAlwaysEachLineIsWrittenAndSyncedAlone() throws {
        let directory = try FileSinkTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        let sink = FileSink(path: path, durability: .always)
        let writes = Writes()
        writes.install(in: sink)
        let (_, failures) = sink.archive(batch: Self.envelopes(5), filters: nil)
        #expect(failures.isEmpty)
        #expect(writes.sizes.withLock { $0.count } == 5)
        #expect(sink.statistics.syncs == 5, "every line on the disk before the batch is acknowledged")
        sink.close()
        #expect(try FileSinkTests.notes(path) == ["1", "2", "3", "4", "5"])
    }

    @Test func aShortBatchWriteIsRolledBackAndEachLineTriedAlone() throws {
        let directory = try FileSinkTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        let sink = FileSink(path: path, durability: .none)
        try sink.archive(FileSinkTests.envelope(0, "0"))
        // Given a disk that takes only part of any write of several lines…
        let writes = Writes { descriptor, buffer in
            // Really writes the first half and a byte: a torn run the sink must cut off.
            buffer.filter { $0 == UInt8(ascii: "\n") }.count > 1 ? systemWrite(descriptor, buffer.baseAddress, buffer.count / 2 + 1) : nil
        }
        writes.install(in: sink)
        sink.state.withLock { state in
            state.file?.writeLine = state.writeLine!
        }
        let (_, failures) = sink.archive(batch: Self.envelopes(10), filters: nil)
        sink.close()
        // …then the torn write is taken back and every line lands whole, alone, in order.
        #expect(failures.isEmpty)
        #expect(writes.sizes.withLock { $0.count } == 11)
        #expect(try FileSinkTests.notes(path) == (0...10).map { "\($0)" })
        #expect(sink.statistics.lines == 11)
        #expect(sink.statistics.failures == 1)
    }

    @Test func aLineTheDiskRefusesFailsAloneAndTheOthersAreKept() throws {
        let directory = try FileSinkTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        let sink = FileSink(path: path, durability: .batch)
        let poison = Array(#""text":"4""#.utf8)
        let writes = Writes { _, buffer in
            guard Array(buffer).firstRange(of: poison) != nil else { return nil }
            errno = ENOSPC
            return -1
        }
        writes.install(in: sink)
        let batch = Self.envelopes(6)
        let (_, failures) = sink.archive(batch: batch[2...], filters: nil)
        sink.close()
        #expect(failures.map(\.index) == [3], "indices are the batch's own")
        #expect(failures.first.map { "\($0.error)".contains("errno \(ENOSPC)") } == true)
        #expect(try FileSinkTests.notes(path) == ["3", "5", "6"])
        #expect(sink.statistics.lines == 3)
    }

    @Test func rotationInsideABatchCutsTheWriteAtALineBoundary() throws {
        let directory = try FileSinkTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        var encoder = EnvelopeLineEncoder()
        let lineLength = try encoder.line(for: FileSinkTests.envelope(1, "1")).count
        let sink = FileSink(path: path, durability: .none,
                            rotation: FileSinkRotation(maxBytes: lineLength * 3, keep: 5))
        let writes = Writes()
        writes.install(in: sink)
        let (_, failures) = sink.archive(batch: Self.envelopes(9), filters: nil)
        sink.close()
        #expect(failures.isEmpty)
        #expect(writes.sizes.withLock { $0 } == [lineLength * 3, lineLength * 3, lineLength * 3])
        #expect(sink.statistics.rotations == 2)
        let rotated = (1...2).reversed().map { FileSinkRotation.rotatedPath(path, index: $0) }
        #expect(try (rotated + [path]).flatMap(FileSinkTests.notes) == (1...9).map { "\($0)" })
    }

    @Test func aLargeBatchGoesOutInWritesOfWholeLinesUnderTheLimit() throws {
        let directory = try FileSinkTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        let sink = FileSink(path: path, durability: .none)
        let writes = Writes()
        writes.install(in: sink)
        let text = String(repeating: "x", count: 100_000)
        let batch = (1...25).map { FileSinkTests.envelope(UInt64($0), "\($0)" + text) }
        let (_, failures) = sink.archive(batch: batch, filters: nil)
        sink.close()
        #expect(failures.isEmpty)
        let sizes = writes.sizes.withLock { $0 }
        #expect(sizes.count == 3)
        #expect(sizes.allSatisfy { $0 <= FileSink.maxWriteBytes })
        #expect(try FileSinkTests.notes(path) == (1...25).map { "\($0)" + text })
    }

    @Test func anUnopenableFileFailsEveryLineAndTheNextBatchRetries() throws {
        let directory = try FileSinkTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let blocker = directory.appendingPathComponent("blocked")
        try Data("not a directory".utf8).write(to: blocker)
        let path = blocker.appendingPathComponent("events.jsonl").path
        let sink = FileSink(path: path, durability: .batch)
        #expect(sink.archive(batch: Self.envelopes(3), filters: nil).failures.map(\.index) == [0, 1, 2])
        try FileManager.default.removeItem(at: blocker)
        #expect(sink.archive(batch: Self.envelopes(2, from: 4), filters: nil).failures.isEmpty)
        sink.close()
        #expect(try FileSinkTests.notes(path) == ["4", "5"])
    }

    @Test func onlyLinesMatchingTheFiltersAreWritten() throws {
        let directory = try FileSinkTests.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.jsonl").path
        let sink = FileSink(path: path, durability: .none)
        let (_, failures) = sink.archive(batch: Self.envelopes(3), filters: ["nothing.here"])
        sink.close()
        #expect(failures.isEmpty)
        #expect(sink.statistics.lines == 0)
    }
}
