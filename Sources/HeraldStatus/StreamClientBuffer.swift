/// The bytes an `/events` client holds, and the decisions about them: the chunks its
/// connection's thread has taken to write and the chunks filling behind them count together
/// against one bound, so a client that stops reading holds at most ``bound`` bytes however they
/// are split (issue 17 #7: the buffer being written was not counted, and a client that did not
/// read held up to twice its bound).
///
/// Bytes are held in chunks of ``chunkSize``, each allocated whole and counted whole, so what is
/// counted is what is allocated (no growth by doubling past the bound), and the writer gives each
/// chunk back as soon as it is written instead of holding everything it took until the end.
struct StreamClientBuffer: Sendable {
    /// What an ``append(_:)`` did.
    enum Appended: Sendable, Hashable {
        /// Appended; `wake` when nothing was waiting (the writer may be asleep); the bytes held now.
        case appended(wake: Bool, held: Int)
        /// It does not fit: the client is too slow. The bytes held (the message not counted).
        case overflow(held: Int)
        /// The client was closed.
        case closed
    }

    /// The size of one chunk.
    static let chunkSize = 4096

    /// The most bytes held at once.
    let bound: Int
    /// What waits, oldest first; every chunk but the last is full.
    private var filling: [[UInt8]] = []
    /// Chunks the writer took and has not given back.
    private var writing = 0
    private(set) var isClosed = false

    init(bound: Int) {
        self.bound = bound
    }

    /// Bytes held now: the chunks being written and those waiting, whole.
    var held: Int { (writing + filling.count) * Self.chunkSize }

    /// Appends one message, in as many new chunks as it needs beyond the room in the last one;
    /// refuses it when those would take the client past its bound.
    mutating func append(_ message: [UInt8]) -> Appended {
        guard !isClosed else { return .closed }
        let room = filling.last.map { Self.chunkSize - $0.count } ?? 0
        let more = message.count > room ? (message.count - room + Self.chunkSize - 1) / Self.chunkSize : 0
        guard held + more * Self.chunkSize <= bound else { return .overflow(held: held) }
        let wake = filling.isEmpty
        var rest = message[...]
        while !rest.isEmpty {
            if filling.last.map({ $0.count == Self.chunkSize }) ?? true {
                var chunk: [UInt8] = []
                chunk.reserveCapacity(Self.chunkSize)
                filling.append(chunk)
            }
            let last = filling.count - 1
            let part = rest.prefix(Self.chunkSize - filling[last].count)
            filling[last].append(contentsOf: part)
            rest = rest.dropFirst(part.count)
        }
        return .appended(wake: wake, held: held)
    }

    /// Hands what waits to the writer, oldest chunk first; it gives each back with
    /// ``chunkWritten()`` once it has let go of it. Nil once closed.
    mutating func take() -> [[UInt8]]? {
        guard !isClosed else { return nil }
        writing += filling.count
        defer { filling = [] }
        return filling
    }

    /// The writer let go of one chunk it took.
    mutating func chunkWritten() {
        writing = max(0, writing - 1)
    }

    /// The writer let go of everything it took.
    mutating func writerDone() {
        writing = 0
    }

    /// Drops what waits; nothing is appended or taken any more (the writer still gives back
    /// what it holds).
    mutating func close() {
        isClosed = true
        filling = []
    }
}
