/// A request head parsed by RFC 9112's grammar: the request line and the field lines, with
/// how the body is framed.
///
/// Lines end in CRLF or, as RFC 9112 §2.2 allows a recipient to accept, a bare LF; a CR
/// anywhere else is refused. Everything the grammar does not allow is a ``HTTPRejection``.
struct HTTPHead: Sendable {
    /// How the body that follows the head is delimited.
    enum Framing: Sendable, Hashable {
        case none
        case length(Int)
        case chunked
    }

    var method: String
    var target: String
    /// The target's path (still percent-encoded) and query (without `?`), by its form: see
    /// ``resolve(target:method:)``.
    var path: String
    var query: String
    var version: String
    var headers: [(name: String, value: String)]
    var framing: Framing

    static let lineFeed: UInt8 = 10
    static let carriageReturn: UInt8 = 13

    /// Parses the bytes of a head up to and including the line end of its last field line
    /// (the empty line that ends the head excluded).
    static func parse(_ bytes: ArraySlice<UInt8>) -> Result<HTTPHead, HTTPRejection> {
        var lines = bytes.split(separator: lineFeed, omittingEmptySubsequences: false).map { line in
            line.last == carriageReturn ? line.dropLast() : line
        }
        if lines.last?.isEmpty == true { lines.removeLast() }
        guard !lines.isEmpty else { return .failure(.badRequest("empty request head")) }
        if lines.contains(where: { $0.contains(carriageReturn) }) {
            return .failure(.badRequest("CR without LF in the request head"))
        }
        let requestLine = lines.removeFirst()
        return parseRequestLine(requestLine).flatMap { method, target, version in
            parseFields(lines).flatMap { headers in
                checkHost(headers, version: version).flatMap {
                    resolve(target: target, method: method).flatMap { path, query in
                        framing(of: headers, version: version).map { framing in
                            HTTPHead(method: method, target: target, path: path, query: query, version: version, headers: headers,
                                     framing: framing)
                        }
                    }
                }
            }
        }
    }

    /// RFC 9112 §3.2: an HTTP/1.1 request has exactly one `Host` field, of valid syntax (an
    /// HTTP/1.0 one may have none); anything else is `400`.
    private static func checkHost(_ headers: [(name: String, value: String)], version: String) -> Result<Void, HTTPRejection> {
        let hosts = headers.filter { $0.name.lowercased() == "host" }
        guard hosts.count <= 1 else { return .failure(.badRequest("more than one Host field")) }
        guard let host = hosts.first else {
            return version == "HTTP/1.0" ? .success(()) : .failure(.badRequest("no Host field (an HTTP/1.1 request must have one)"))
        }
        // An empty value is allowed: a target without an authority has one (RFC 9110 §7.2).
        guard host.value.utf8.allSatisfy(isAuthorityByte) else { return .failure(.badRequest("bad Host field: \(host.value)")) }
        return .success(())
    }

    /// The path and query the target names, by its form (RFC 9112 §3.2): the origin form
    /// (`/path?query`) as sent; the absolute form (`http://host/path?query`, any case of `http`
    /// or `https`) as its path (`/` when it has none) and query, the host in it winning over
    /// `Host` (§3.2.2); the authority form (`host:port`) for `CONNECT` only and the asterisk
    /// form (`*`) for `OPTIONS` only, each as the path, with no query. Anything else is `400`.
    static func resolve(target: String, method: String) -> Result<(path: String, query: String), HTTPRejection> {
        func split(_ reference: Substring) -> (path: String, query: String) {
            guard let mark = reference.firstIndex(of: "?") else { return (String(reference), "") }
            return (String(reference[..<mark]), String(reference[reference.index(after: mark)...]))
        }
        if method == "CONNECT" {
            guard isAuthorityForm(target) else { return .failure(.badRequest("bad request target: CONNECT takes host:port")) }
            return .success((target, ""))
        }
        if target.hasPrefix("/") { return .success(split(target[...])) }
        if target == "*" {
            guard method == "OPTIONS" else { return .failure(.badRequest("bad request target: * is for OPTIONS only")) }
            return .success(("*", ""))
        }
        guard let separator = target.range(of: "://") else {
            return .failure(.badRequest("bad request target: expected /path, an absolute http URL, host:port (CONNECT) or * (OPTIONS)"))
        }
        let scheme = target[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return .failure(.badRequest("bad request target: the scheme \(scheme) is not served")) }
        let rest = target[separator.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        // RFC 9110 §4.2.1 and §4.2.4: an http URI has a host and no userinfo.
        guard !authority.isEmpty, !authority.hasPrefix(":"), authority.utf8.allSatisfy(isAuthorityByte) else {
            return .failure(.badRequest("bad request target: no valid host in \(target)"))
        }
        var (path, query) = split(rest[authorityEnd...])
        if path.isEmpty { path = "/" }
        return .success((path, query))
    }

    /// `host:port` with a non-empty host and a decimal port.
    private static func isAuthorityForm(_ target: String) -> Bool {
        guard let colon = target.lastIndex(of: ":") else { return false }
        let host = target[..<colon], port = target[target.index(after: colon)...]
        return !host.isEmpty && host.utf8.allSatisfy(isAuthorityByte) && !port.isEmpty && port.utf8.allSatisfy(isDigit)
    }

    /// A byte of `uri-host [":" port]` (RFC 3986): unreserved, `%`, sub-delims, `:`, and the
    /// brackets of an IP literal; no `@` (no userinfo), `/`, space or control.
    static func isAuthorityByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), 0x30...0x39: return true
        default: return Array("-._~%!$&'()*+,;=:[]".utf8).contains(byte)
        }
    }

    /// `method SP request-target SP HTTP-version`, exactly one space each (RFC 9112 §3).
    private static func parseRequestLine(_ line: ArraySlice<UInt8>) -> Result<(String, String, String), HTTPRejection> {
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            return .failure(.badRequest("bad request line: expected method, target and version separated by single spaces"))
        }
        guard !parts[0].isEmpty, parts[0].allSatisfy(isTokenByte) else { return .failure(.badRequest("bad request line: bad method")) }
        guard !parts[1].isEmpty, parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(.badRequest("bad request line: bad request target"))
        }
        let version = parts[2]
        guard version.count == 8, version.starts(with: Array("HTTP/".utf8)),
              isDigit(version[version.startIndex + 5]), version[version.startIndex + 6] == UInt8(ascii: "."),
              isDigit(version[version.startIndex + 7])
        else { return .failure(.badRequest("bad request line: bad HTTP version")) }
        guard version[version.startIndex + 5] == UInt8(ascii: "1") else {
            return .failure(HTTPRejection(505, "only HTTP/1.x is served"))
        }
        return .success((String(decoding: parts[0], as: UTF8.self), String(decoding: parts[1], as: UTF8.self),
                         String(decoding: version, as: UTF8.self)))
    }

    /// `field-name ":" OWS field-value OWS` (RFC 9112 §5): no space before the colon, no
    /// line folding, no control characters in the value.
    private static func parseFields(_ lines: [ArraySlice<UInt8>]) -> Result<[(name: String, value: String)], HTTPRejection> {
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                return .failure(.badRequest("bad header line: no colon"))
            }
            let name = line[line.startIndex..<colon]
            guard !name.isEmpty, name.allSatisfy(isTokenByte) else {
                return .failure(.badRequest("bad header line: bad field name (folded lines and spaces before the colon are refused)"))
            }
            var value = line[line.index(after: colon)...]
            while let first = value.first, isWhitespace(first) { value.removeFirst() }
            while let last = value.last, isWhitespace(last) { value.removeLast() }
            guard !value.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else {
                return .failure(.badRequest("bad header line: control character in the value of \(String(decoding: name, as: UTF8.self))"))
            }
            headers.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return .success(headers)
    }

    /// The body's framing by RFC 9112 §6: `Transfer-Encoding: chunked` or one valid
    /// `Content-Length`; both together, a conflicting or malformed length, or another coding
    /// is refused.
    private static func framing(of headers: [(name: String, value: String)], version: String) -> Result<Framing, HTTPRejection> {
        func values(_ name: String) -> [String] {
            headers.filter { $0.name.lowercased() == name }
                .flatMap { $0.value.split(separator: ",", omittingEmptySubsequences: false) }
                .map { $0.trimmingCharacters(in: [" ", "\t"]) }
        }
        let codings = values("transfer-encoding").map { $0.lowercased() }
        let lengths = values("content-length")
        if !codings.isEmpty {
            guard lengths.isEmpty else { return .failure(.badRequest("Content-Length together with Transfer-Encoding")) }
            guard version != "HTTP/1.0" else { return .failure(.badRequest("Transfer-Encoding in an HTTP/1.0 request")) }
            guard codings.last == "chunked" else { return .failure(.badRequest("chunked is not the final transfer coding")) }
            guard codings.count == 1 else { return .failure(HTTPRejection(501, "transfer codings other than chunked are not supported")) }
            return .success(.chunked)
        }
        guard let length = lengths.first else { return .success(.none) }
        guard lengths.allSatisfy({ $0 == length }) else { return .failure(.badRequest("conflicting Content-Length values")) }
        guard !length.isEmpty, length.utf8.allSatisfy(isDigit) else { return .failure(.badRequest("bad Content-Length")) }
        let significant = length.drop { $0 == "0" }
        // More digits than an Int holds is a length no limit allows.
        guard significant.count <= 18, let value = Int(significant.isEmpty ? "0" : significant) else {
            return .failure(HTTPRejection(413, "body too large"))
        }
        return .success(.length(value))
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    /// tchar of RFC 9110 §5.6.2.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), 0x30...0x39: return true
        default: return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
