import Foundation

/// Decodes JSON response bodies into models, turning every failure into a
/// ``ServiceError`` of kind `.decoding` with the path or position and a body excerpt.
public enum JSONBodyDecoder {
    /// Decodes `type` from `body`.
    ///
    /// - Parameter contentType: the response's `Content-Type`; when present it must name JSON
    ///   (`application/json`, `text/json`, `…+json`, or `text/javascript`).
    /// - Throws: ``ServiceError`` `.decoding` on an empty body, a wrong content type, a syntax
    ///   error, or a wrong shape (an object where an array was expected, a missing field).
    public static func decode<T: Decodable>(_ type: T.Type, from body: Data, contentType: String? = nil) throws -> T {
        if let contentType, !isJSON(contentType) {
            throw ServiceError.decoding("expected JSON, got content type \(contentType)", location: "Content-Type", body: body)
        }
        guard !body.isEmpty else {
            throw ServiceError.decoding("empty body where JSON was expected", location: "body", body: body)
        }
        do {
            return try JSONDecoder().decode(T.self, from: body)
        } catch let error as DecodingError {
            throw map(error, body: body)
        } catch {
            throw ServiceError.decoding("invalid JSON: \(error)", location: "body", body: body)
        }
    }

    /// Decodes `type` from a response body, checking its content type.
    public static func decode<T: Decodable>(_ type: T.Type, from response: HTTPResponse) throws -> T {
        try decode(type, from: response.body, contentType: response.headers["Content-Type"])
    }

    static func isJSON(_ contentType: String) -> Bool {
        let mime = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return mime == "application/json" || mime == "text/json" || mime.hasSuffix("+json") || mime == "text/javascript"
            || mime == "application/javascript"
    }

    /// `[3].user.id_str` from a coding path.
    static func pathDescription(_ path: [any CodingKey]) -> String {
        if path.isEmpty { return "(root)" }
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += (text.isEmpty ? "" : ".") + key.stringValue
            }
        }
        return text
    }

    /// Where a syntax error lies, as `line L, column C (byte N)` or `end of body (byte N)`;
    /// nil when `body` is valid JSON. JSONDecoder does not say; JSONSerialization does.
    public static func syntaxError(in body: Data) -> (reason: String, location: String)? {
        do {
            _ = try JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
            return nil
        } catch {
            let detail = ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String) ?? "\(error)"
            if let range = detail.range(of: "character "),
                let offset = Int(detail[range.upperBound...].prefix { $0.isNumber }) {
                return (detail, position(ofByte: offset, in: body))
            }
            if detail.lowercased().contains("end of file") {
                return (detail, "end of body (byte \(body.count))")
            }
            return (detail, "body")
        }
    }

    /// `line L, column C (byte N)`, lines and columns counted from 1.
    static func position(ofByte offset: Int, in body: Data) -> String {
        var line = 1
        var column = 1
        for byte in body.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return "line \(line), column \(column) (byte \(offset))"
    }

    private static func map(_ error: DecodingError, body: Data) -> ServiceError {
        switch error {
        case .typeMismatch(let type, let context):
            return .decoding("expected \(type): \(context.debugDescription)", location: pathDescription(context.codingPath), body: body)
        case .valueNotFound(let type, let context):
            return .decoding("missing \(type): \(context.debugDescription)", location: pathDescription(context.codingPath), body: body)
        case .keyNotFound(let key, let context):
            let path = pathDescription(context.codingPath + [key])
            return .decoding("missing key \(key.stringValue)", location: path, body: body)
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            if let syntax = syntaxError(in: body) { return .decoding("invalid JSON: \(syntax.reason)", location: syntax.location, body: body) }
            return .decoding(context.debugDescription, location: "(root)", body: body)
        case .dataCorrupted(let context):
            let underlying = context.underlyingError.map { " (\($0))" } ?? ""
            return .decoding(context.debugDescription + underlying, location: pathDescription(context.codingPath), body: body)
        @unknown default:
            return .decoding("\(error)", location: "body", body: body)
        }
    }
}
