import Foundation
import Herald
import HeraldSubscribers

/// `herald tail`'s view of a file subscriber's archive: its lines, filtered by topic, each as
/// the terminal shows it (pretty, or the envelope's JSON line as written).
///
/// Every line is safe for a terminal: control characters in it (a sender set by any NATS
/// publisher, a hand-written line) are escaped, the JSON lines' as JSON escapes.
public struct ArchiveTail: Sendable {
    private let reader: ArchiveReader
    private let json: Bool

    /// The live file.
    public var path: String { reader.path }

    /// A view of the archive at `path`.
    ///
    /// - Parameters:
    ///   - topics: topic patterns; only envelopes matching one of them are shown (all when empty).
    ///   - json: envelopes as their JSON lines rather than pretty.
    /// - Throws: the validation error of the first topic that is not a pattern.
    public init(path: String, topics: [String] = [], json: Bool = false) throws {
        var patterns: [TopicPattern] = []
        for topic in topics {
            patterns.append(try TopicPattern(validating: topic))
        }
        reader = ArchiveReader(path: path, patterns: patterns)
        self.json = json
    }

    /// The files to read, oldest first (the rotated ones, then the live file), that exist.
    public func files() -> [String] {
        reader.files()
    }

    /// Every line of the archive, in order, as shown.
    ///
    /// - Throws: a file listed by ``files()`` that cannot be read.
    public func lines() throws -> [String] {
        try reader.lines().map(show)
    }

    /// The lines in `data`, as shown; an unterminated end is shown as torn.
    public func lines(in data: Data) -> [String] {
        reader.parse(data).map(show)
    }

    private func show(_ line: ArchiveReader.Line) -> String {
        switch (json, line) {
        case (true, .envelope(_, let text)): TerminalText.json(text)
        default: ArchiveReader.pretty(line)
        }
    }
}
