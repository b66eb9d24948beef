import Foundation
import Herald

/// Reads a JSON Lines archive written by ``FileSink``, for `herald tail`: the rotated files
/// first (oldest first: `events.<n>.jsonl` … `events.1.jsonl`), then the live file.
///
/// Nothing in a file is fatal: a line that is not JSON, or not an envelope, is returned as
/// such, and so is a torn last line (no newline yet).
public struct ArchiveReader: Sendable {
    /// One line of an archive.
    public enum Line: Sendable, Equatable {
        /// An envelope: its topic, and the line as written.
        case envelope(topic: String, text: String)
        /// A complete line that is not a JSON envelope.
        case notJSON(String)
        /// The end of the file without a newline (a write in progress, or a crash mid-write).
        case torn(String)
    }

    /// The live file.
    public let path: String
    /// Only envelopes whose topic matches one of these (all when empty).
    public let patterns: [TopicPattern]

    public init(path: String, patterns: [TopicPattern] = []) {
        self.path = path
        self.patterns = patterns
    }

    /// The files to read, oldest first, that exist.
    public func files() -> [String] {
        var rotated: [String] = []
        var index = 1
        while FileManager.default.fileExists(atPath: FileSinkRotation.rotatedPath(path, index: index)) {
            rotated.append(FileSinkRotation.rotatedPath(path, index: index))
            index += 1
        }
        let live = FileManager.default.fileExists(atPath: path) ? [path] : []
        return rotated.reversed() + live
    }

    /// Every line of the archive, in order, filtered by topic (non-envelope lines are kept).
    public func lines() throws -> [Line] {
        try files().flatMap { file -> [Line] in
            guard let data = FileManager.default.contents(atPath: file) else {
                throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: file])
            }
            return parse(data)
        }
    }

    /// The lines in `data`; an unterminated end is ``Line/torn(_:)``.
    public func parse(_ data: Data) -> [Line] {
        var result: [Line] = []
        var start = data.startIndex
        while start < data.endIndex {
            guard let newline = data[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                result.append(.torn(String(decoding: data[start...], as: UTF8.self)))
                break
            }
            if let line = classify(data[start..<newline]) { result.append(line) }
            start = data.index(after: newline)
        }
        return result
    }

    /// A complete line: an envelope (nil when filtered out) or not JSON.
    public func classify(_ bytes: Data) -> Line? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let object = try? JSONSerialization.jsonObject(with: bytes) as? [String: Any],
            let topic = object["topic"] as? String
        else { return .notJSON(text) }
        if !patterns.isEmpty, let parsed = try? Topic(validating: topic),
            !patterns.contains(where: { $0.matches(parsed) })
        {
            return nil
        }
        return .envelope(topic: topic, text: text)
    }

    /// A line as `herald tail` prints it: `time  topic  sender  #seq  event` for an envelope.
    public static func pretty(_ line: Line) -> String {
        switch line {
        case .notJSON(let text): return "(not JSON) \(oneLine(text))"
        case .torn(let text): return "(torn, no newline) \(oneLine(text))"
        case .envelope(_, let text):
            guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
                return "(not JSON) \(oneLine(text))"
            }
            let time = object["time"] as? String ?? "-"
            let topic = object["topic"] as? String ?? "-"
            let sender = object["sender"] as? String ?? "-"
            let seq = (object["seq"] as? NSNumber).map { "#\($0)" } ?? "#?"
            var event = "{}"
            if let value = object["event"],
                let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
            {
                event = String(decoding: data, as: UTF8.self)
            }
            // Time, topic and sender are whatever the file (or a NATS publisher) says.
            return "\(oneLine(time))  \(oneLine(topic))  \(oneLine(sender))  \(seq)  \(oneLine(event))"
        }
    }

    /// Control characters escaped, so an archived text cannot drive the terminal (the console
    /// log's escaper, ``LogLineFormatter/oneLine(_:)``).
    package static func oneLine(_ text: String) -> String {
        LogLineFormatter.oneLine(text)
    }
}
