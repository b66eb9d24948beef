import Foundation

/// Splits a `multipart/form-data` body into named parts.
enum MultipartParser {
    struct Part: Sendable {
        var name: String
        var filename: String?
        var contentType: String?
        var data: Data
    }

    /// The boundary parameter of a `multipart/form-data` content type.
    static func boundary(of contentType: String) -> String? {
        guard contentType.lowercased().hasPrefix("multipart/form-data") else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == "boundary" {
                return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return nil
    }

    /// The parts of `body`; nil when it is not well formed.
    static func parse(_ body: Data, boundary: String) -> [Part]? {
        let bytes = [UInt8](body)
        let delimiter = Array("--\(boundary)".utf8)
        var positions: [Int] = []
        var index = 0
        while let found = find(delimiter, in: bytes, from: index) {
            positions.append(found)
            index = found + delimiter.count
        }
        guard positions.count >= 2 else { return nil }
        var parts: [Part] = []
        for (start, end) in zip(positions, positions.dropFirst()) {
            var partStart = start + delimiter.count
            guard partStart + 2 <= bytes.count, bytes[partStart] == 13, bytes[partStart + 1] == 10 else { return nil }
            partStart += 2
            // The part ends with CRLF before the next delimiter.
            let partEnd = end - 2
            // The head's blank line must end before the data's closing CRLF, or the range
            // of the data would be inverted.
            guard partEnd >= partStart, let headEnd = find([13, 10, 13, 10], in: bytes, from: partStart), headEnd + 4 <= partEnd else {
                return nil
            }
            let head = String(decoding: bytes[partStart..<headEnd], as: UTF8.self)
            var name: String?
            var filename: String?
            var contentType: String?
            for line in head.components(separatedBy: "\r\n") {
                let lowered = line.lowercased()
                if lowered.hasPrefix("content-disposition:") {
                    name = quotedParameter("name", in: line)
                    filename = quotedParameter("filename", in: line)
                } else if lowered.hasPrefix("content-type:") {
                    contentType = line.dropFirst("content-type:".count).trimmingCharacters(in: .whitespaces)
                }
            }
            guard let name else { return nil }
            parts.append(Part(name: name, filename: filename, contentType: contentType, data: Data(bytes[(headEnd + 4)..<partEnd])))
        }
        let closing = positions[positions.count - 1] + delimiter.count
        guard closing + 2 <= bytes.count, bytes[closing] == UInt8(ascii: "-"), bytes[closing + 1] == UInt8(ascii: "-") else {
            return nil
        }
        return parts
    }

    private static func quotedParameter(_ key: String, in line: String) -> String? {
        for piece in line.split(separator: ";") {
            let pair = piece.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == key {
                return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return nil
    }

    private static func find(_ pattern: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard !pattern.isEmpty, bytes.count >= pattern.count, start <= bytes.count - pattern.count else { return nil }
        var index = start
        let last = bytes.count - pattern.count
        while index <= last {
            if bytes[index] == pattern[0] {
                var matched = true
                for offset in 1..<pattern.count where bytes[index + offset] != pattern[offset] {
                    matched = false
                    break
                }
                if matched { return index }
            }
            index += 1
        }
        return nil
    }
}
