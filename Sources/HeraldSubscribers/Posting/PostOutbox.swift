import HeraldIO
import HeraldSync
import Foundation
import HeraldServices
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A post the scheduler means to make, as written to the outbox before anything is sent.
public struct PostIntent: Sendable, Hashable, Codable {
    /// What is posted, rendered.
    public enum Content: Sendable, Hashable, Codable {
        /// A status, an optional media file's path, and the id of the post it replies to, if
        /// any (absent from outbox lines written before replies existed, which read as nil).
        case status(text: String, media: String?, inReplyTo: String? = nil)
        /// A BaaS object's fields in a bucket.
        case object(bucket: String, fields: [String: JSONValue])
        /// A Mastodon status with its options and an optional media file's path.
        case mastodonStatus(MastodonPostContent)
        /// A webhook delivery: the rendered JSON body, sent byte for byte on every attempt.
        case webhook(body: String)
    }

    /// The idempotency key: the rule and the triggering event's item (or the event itself).
    public var key: String
    /// The rule.
    public var rule: String
    /// The service's name.
    public var service: String
    /// What is posted.
    public var content: Content
    /// The correlation id of the triggering event (`EventID` text).
    public var correlation: String?
    /// When the intent was made.
    public var created: Date

    public init(key: String, rule: String, service: String, content: Content, correlation: String?, created: Date) {
        self.key = key
        self.rule = rule
        self.service = service
        self.content = content
        self.correlation = correlation
        self.created = created
    }
}

/// The outbox journal: a JSON Lines file in the state directory where every intent is appended
/// (and fsync'd) before its post is sent, and marked done (sent or failed) after the answer.
///
/// At open, intents without a done record are returned to be retried, done keys are kept so
/// the same key is never posted twice, and the journal is compacted (rewritten atomically with
/// only what is still needed). A line that cannot be read (a crash mid-append leaves at most a
/// torn last line, whose append was never acknowledged) is copied to `<path>.torn`. On a full
/// disk the journal is kept uncompacted (a torn last line cut off), which reads the same.
///
/// Its file is a ``JSONLinesFile``, the journal the file sink's archive is written through too:
/// whole lines in one `write(2)`, a failed or short one cut off again.
final class PostOutbox: Sendable {
    /// One journal line.
    struct Record: Codable {
        enum Operation: String, Codable { case intent, done }
        var op: Operation
        var key: String
        var intent: PostIntent?
        var result: String?
        var at: Date
        var rule: String?
    }

    /// What the journal held at open.
    struct Recovery: Sendable {
        /// Intents not done, oldest first.
        var pending: [PostIntent] = []
        /// Keys done (sent or failed) or pending.
        var known: Set<String> = []
        /// Recent sends per rule, for rate limits.
        var sends: [String: [Date]] = [:]
        /// Unreadable lines set aside.
        var setAside = 0
        /// Their bytes.
        var setAsideBytes = 0
        /// The compacted journal's size.
        var keptBytes = 0
    }

    /// Writes bytes to a descriptor as `write(2)` does: the count written, or -1 with `errno` set.
    typealias Write = @Sendable (_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int

    let path: String
    /// Done keys kept at compaction (the newest ones).
    static let keptDoneKeys = 100_000
    private let journal = SyncLock<JSONLinesFile?>(nil)
    private let write: Write
    /// Where the scheduler runs the journal's appends, off the publisher and off the pool; the
    /// daemon gives its loaders' state store the same thread, so their state files are written
    /// after the intents queued before them.
    let io: BlockingIOThread

    /// - Parameters:
    ///   - write: what writes the journal's bytes; tests make it refuse (a full disk) or park.
    ///   - io: the thread the scheduler appends on (the one the loaders' state store writes on).
    init(path: String, write: @escaping Write = systemWrite, io: BlockingIOThread) {
        self.path = path
        self.write = write
        self.io = io
    }

    deinit {
        journal.withLock { $0?.close() }
    }

    /// Reads the journal, compacts it and opens it for appending.
    func recover() throws(PostOutboxError) -> Recovery {
        let url = URL(fileURLWithPath: path)
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw PostOutboxError(path: path, reason: "cannot create its directory: \(error.localizedDescription)")
        }
        var recovery = Recovery()
        var intents: [String: PostIntent] = [:]
        var order: [String] = []
        var done: [(key: String, record: Record)] = []
        var doneKeys: Set<String> = []
        // The journal's whole lines (a torn last line, never acknowledged, is past them), and
        // whether it must be kept as it is rather than compacted: a full disk.
        var wholeBytes: Int?
        var keepAsIs = false
        if FileManager.default.fileExists(atPath: path) {
            let data: Data
            do {
                data = try Data(contentsOf: url)
            } catch {
                throw PostOutboxError(path: path, reason: "cannot read: \(error.localizedDescription)")
            }
            wholeBytes = data.lastIndex(of: UInt8(ascii: "\n")).map { data.distance(from: data.startIndex, to: $0) + 1 } ?? 0
            let decoder = Self.decoder()
            var unreadable: [Data] = []
            for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
                guard let record = try? decoder.decode(Record.self, from: Data(line)) else {
                    unreadable.append(Data(line))
                    continue
                }
                switch record.op {
                case .intent:
                    guard let intent = record.intent, intents[record.key] == nil, !doneKeys.contains(record.key) else { continue }
                    intents[record.key] = intent
                    order.append(record.key)
                case .done:
                    intents[record.key] = nil
                    if doneKeys.insert(record.key).inserted { done.append((record.key, record)) }
                }
            }
            if !unreadable.isEmpty {
                do {
                    try setAside(unreadable)
                    recovery.setAside = unreadable.count
                    recovery.setAsideBytes = unreadable.reduce(0) { $0 + $1.count + 1 }
                } catch {
                    keepAsIs = true  // not copied: the journal keeps them
                }
            }
        }
        recovery.pending = order.compactMap { intents[$0] }
        done = Array(done.suffix(Self.keptDoneKeys))
        recovery.known = Set(done.map(\.key)).union(recovery.pending.map(\.key))
        for (_, record) in done where record.result == "sent" {
            if let rule = record.rule { recovery.sends[rule, default: []].append(record.at) }
        }
        let records = done.map(\.record) + recovery.pending.map { Record(op: .intent, key: $0.key, intent: $0, at: $0.created, rule: $0.rule) }
        if !keepAsIs {
            do {
                recovery.keptBytes = try rewrite(records)
            } catch {
                keepAsIs = true
            }
        }
        if keepAsIs {
            // No room to compact: the journal says the same read again, so it is kept, cut
            // after its last whole line so that the next record starts a line of its own.
            _ = unlink(path + ".compact")
            recovery.keptBytes = try keepUncompacted(wholeBytes: wholeBytes ?? 0)
        }
        let (path, write) = (self.path, self.write)
        try journal.withLock { journal throws(PostOutboxError) in
            do throws(FileSinkError) {
                // Compacted or cut after its last whole line, so there is no torn line to repair.
                var (file, _) = try JSONLinesFile.open(path: path)
                file.writeLine = write
                journal?.close()
                journal = file
            } catch {
                throw PostOutboxError(path: path, reason: "cannot open: \(error.reason)")
            }
        }
        return recovery
    }

    /// Appends an intent and forces it to the disk.
    func append(_ intent: PostIntent) throws(PostOutboxError) {
        try append(Record(op: .intent, key: intent.key, intent: intent, at: intent.created, rule: intent.rule))
    }

    /// Records that `key` is done (`sent` or `failed`) and forces it to the disk.
    func markDone(_ key: String, rule: String, result: String, at date: Date) throws(PostOutboxError) {
        try append(Record(op: .done, key: key, result: result, at: date, rule: rule))
    }

    /// Closes the journal.
    func closeJournal() {
        journal.withLock { $0?.close(); $0 = nil }
    }

    private func append(_ record: Record) throws(PostOutboxError) {
        let line: [UInt8]
        do {
            line = Array(try Self.encoder().encode(record)) + [UInt8(ascii: "\n")]
        } catch {
            throw PostOutboxError(path: path, reason: "cannot encode a record: \(error)")
        }
        try journal.withLock { file throws(PostOutboxError) in
            guard file != nil else { throw PostOutboxError(path: path, reason: "the outbox is not open") }
            // A failed or short write is cut off again, so the next record starts a line of its own.
            do throws(FileSinkError) {
                try file!.append(line)
                try file!.sync()
            } catch {
                throw PostOutboxError(path: path, reason: "\(Self.failure(error)): \(error.reason)")
            }
        }
    }

    /// What failed, in the words the outbox's errors use.
    private static func failure(_ error: FileSinkError) -> String {
        switch error.code {
        case .sync: "fsync failed"
        case .open, .createDirectory: "cannot open"
        case .rename: "cannot replace with the compacted journal"
        default: "write failed"
        }
    }

    @discardableResult
    private func rewrite(_ records: [Record]) throws(PostOutboxError) -> Int {
        let encoder = Self.encoder()
        var bytes: [UInt8] = []
        for record in records {
            guard let data = try? encoder.encode(record) else { continue }
            bytes += data
            bytes.append(UInt8(ascii: "\n"))
        }
        do {
            return try JSONLinesFile.replace(path, with: bytes, write: write)
        } catch {
            throw PostOutboxError(path: error.path, reason: "\(Self.failure(error)): \(error.reason)")
        }
    }

    /// Cuts the journal after `wholeBytes` (truncating needs no free space).
    private func keepUncompacted(wholeBytes: Int) throws(PostOutboxError) -> Int {
        var status = stat()
        guard stat(path, &status) == 0 else { return 0 }
        if Int(status.st_size) > wholeBytes, truncate(path, off_t(wholeBytes)) != 0 {
            throw PostOutboxError(path: path, reason: "cannot cut off a torn last line: \(String(cString: strerror(errno)))")
        }
        return min(Int(status.st_size), wholeBytes)
    }

    /// Copies unreadable lines to `<path>.torn`, where the archive's torn lines go too.
    private func setAside(_ lines: [Data]) throws(PostOutboxError) {
        var bytes: [UInt8] = []
        for line in lines { bytes += line; bytes.append(UInt8(ascii: "\n")) }
        do {
            try JSONLinesFile.appendAndSync(bytes, to: JSONLinesFile.tornPath(path))
        } catch {
            throw PostOutboxError(path: error.path, reason: "\(Self.failure(error)): \(error.reason)")
        }
    }

    /// Dates in ISO 8601 with milliseconds (the rate window is measured from them).
    private static let dateStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    private static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(dateStyle.format(date))
        }
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            if let date = (try? dateStyle.parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text)) { return date }
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 date: \(text)")
        }
        return decoder
    }
}

/// `write(2)`.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
    write(descriptor, bytes.baseAddress, bytes.count)
}

/// The outbox journal cannot be read or written.
public struct PostOutboxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// What went wrong.
    public var reason: String

    public var description: String { "outbox \(path): \(reason)" }
}
