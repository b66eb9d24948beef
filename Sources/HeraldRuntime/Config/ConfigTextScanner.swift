import Foundation

/// Reads `config.json` as text for what the JSON parsers cannot report: a key written twice in
/// one object (JSONSerialization and JSONDecoder keep the first without a word, while most JSON
/// tools keep the last, so the file means different things to different readers) and a
/// trailing comma (which the parser on Linux may accept).
///
/// Not a validator: at anything else it does not understand it stops, and leaves the syntax
/// error to the parser. Each problem names the JSON path and the line and column (counted from
/// 1, columns in Unicode scalars), never a value.
enum ConfigTextScanner {
    /// The problems found, in document order.
    static func issues(in data: Data) -> [ConfigIssue] {
        var scan = Scan(bytes: [UInt8](data))
        if scan.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { scan.index = 3 }
        do {
            try scan.value(at: "", depth: 0)
        } catch {
            // Malformed or too deep: the parser says where; what was found before still stands.
        }
        let offsets = scan.found.flatMap { problem -> [Int] in
            switch problem {
            case .duplicate(_, let offset, let first): [offset, first]
            case .trailingComma(_, let offset): [offset]
            }
        }
        let positions = scan.positions(of: offsets)
        return scan.found.map { problem in
            switch problem {
            case .duplicate(let path, let offset, let first):
                ConfigIssue(path: path, message: "duplicate key at \(positions[offset, default: "?"]) (first at \(positions[first, default: "?"])); write it once")
            case .trailingComma(let path, let offset):
                ConfigIssue(path: path, message: "trailing comma at \(positions[offset, default: "?"]); JSON allows none")
            }
        }
    }

    private enum Problem {
        case duplicate(path: String, offset: Int, first: Int)
        case trailingComma(path: String, offset: Int)
    }

    private struct Stop: Error {}

    private struct Scan {
        let bytes: [UInt8]
        var index = 0
        var found: [Problem] = []

        /// Deeper than any configuration; a bound so hostile nesting cannot exhaust the stack.
        static let maximumDepth = 100

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func value(at path: String, depth: Int) throws(Stop) {
            guard depth < Self.maximumDepth else { throw Stop() }
            skipWhitespace()
            switch current {
            case UInt8(ascii: "{"): try object(at: path, depth: depth)
            case UInt8(ascii: "["): try array(at: path, depth: depth)
            case UInt8(ascii: "\""): try skipString()
            case nil: throw Stop()
            default:
                // A number, true, false or null: the parser checks its spelling.
                let start = index
                while let byte = current, !Self.endsScalar(byte) { index += 1 }
                guard index > start else { throw Stop() }
            }
        }

        static func endsScalar(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ":"), UInt8(ascii: "\""),
                 UInt8(ascii: "{"), UInt8(ascii: "["), 0x20, 0x0A, 0x0D, 0x09: true
            default: false
            }
        }

        mutating func object(at path: String, depth: Int) throws(Stop) {
            index += 1
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                index += 1
                return
            }
            // Keys compare as Swift strings, as they do in the dictionary the parser builds.
            var seen: [String: Int] = [:]
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else { throw Stop() }
                let keyOffset = index
                let key = try string()
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { throw Stop() }
                index += 1
                let here = ConfigReader.join(path, key)
                if let first = seen[key] {
                    found.append(.duplicate(path: here, offset: keyOffset, first: first))
                } else {
                    seen[key] = keyOffset
                }
                try value(at: here, depth: depth + 1)
                guard try endOfMember(closing: UInt8(ascii: "}"), at: path) else { return }
            }
        }

        mutating func array(at path: String, depth: Int) throws(Stop) {
            index += 1
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                index += 1
                return
            }
            var element = 0
            while true {
                try value(at: "\(path)[\(element)]", depth: depth + 1)
                element += 1
                guard try endOfMember(closing: UInt8(ascii: "]"), at: path) else { return }
            }
        }

        /// After a member: true when another follows, false at the closing bracket (reporting
        /// a comma just before it).
        mutating func endOfMember(closing: UInt8, at path: String) throws(Stop) -> Bool {
            skipWhitespace()
            switch current {
            case closing:
                index += 1
                return false
            case UInt8(ascii: ","):
                let comma = index
                index += 1
                skipWhitespace()
                guard current == closing else { return true }
                found.append(.trailingComma(path: path, offset: comma))
                index += 1
                return false
            default:
                throw Stop()
            }
        }

        /// Moves past the string starting at ``index`` (a `"`); true when it has escapes.
        @discardableResult
        mutating func skipString() throws(Stop) -> Bool {
            index += 1
            var escaped = false
            while let byte = current, byte != UInt8(ascii: "\"") {
                if byte == UInt8(ascii: "\\") {
                    escaped = true
                    index += 1
                }
                index += 1
            }
            guard current != nil else { throw Stop() }
            index += 1
            return escaped
        }

        /// The string starting at ``index`` (a `"`), unescaped.
        mutating func string() throws(Stop) -> String {
            let start = index
            let escaped = try skipString()
            let token = bytes[start..<index]
            guard escaped else { return String(decoding: token.dropFirst().dropLast(), as: UTF8.self) }
            guard let text = try? JSONSerialization.jsonObject(with: Data(token), options: .fragmentsAllowed) as? String else {
                throw Stop()
            }
            return text
        }

        /// `line L, column C` (both from 1) of each byte offset, in one pass over the text.
        func positions(of offsets: [Int]) -> [Int: String] {
            var positions: [Int: String] = [:]
            var line = 1
            var column = 1
            // An editor shows no byte order mark.
            var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
            for offset in Set(offsets).sorted() {
                while index < min(offset, bytes.count) {
                    if bytes[index] == UInt8(ascii: "\n") {
                        line += 1
                        column = 1
                    } else if bytes[index] & 0xC0 != 0x80 {
                        column += 1
                    }
                    index += 1
                }
                positions[offset] = "line \(line), column \(column)"
            }
            return positions
        }
    }
}
