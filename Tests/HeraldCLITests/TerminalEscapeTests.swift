import Foundation
import Testing
import HeraldTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Text the CLI prints from outside (a status endpoint's answer, an archive's lines, a server's
/// error) never reaches the terminal raw: an escape sequence could clear the screen, retitle the
/// window or forge a log line.
@Suite struct TerminalEscapeTests {
    static let herald = BuiltProducts.url(of: "herald")

    /// Strings that drive a terminal: clear the screen, set the title (OSC ... BEL), a CR LF and a
    /// forged log line, an 8-bit CSI (C1), DEL, a line separator.
    static let hostile = "\u{1B}[2J\u{1B}]0;pwned\u{07}\r\n2030-01-01T00:00:00Z INFO    forged\u{9B}31m\u{7F}\u{2028}end"

    /// Every control character in `text` but the line feeds, as `U+XX` names (empty when clean).
    static func controlCharacters(in text: String) -> [String] {
        text.unicodeScalars.filter { scalar in
            scalar != "\n" && (scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029)
        }.map { "U+" + String($0.value, radix: 16, uppercase: true) }
    }

    /// A JSON string literal of `text`, control characters as `\u00XX` (what a server would send).
    static func json(_ text: String) -> String {
        (try? JSONEncoder().encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
    }

    /// A `/status` answer whose every string field carries ``hostile``.
    static var hostileStatus: String {
        let h = json(hostile)
        let id = json("home" + hostile)
        return """
            {"time":"2030-01-01T00:00:00Z","ready":true,
             "bus":{"published":1,"topics":[{"topic":\(h),"published":1,"delivered":1,"dropped":0,"failed":0}],
                    "subscriptions":[{"id":1,"name":\(h),"pattern":\(h),"delivery":\(h),"delivered":0,"dropped":0,"failed":0,
                                      "discarded":0,"queueDepth":0,"highWaterMark":0}]},
             "loaders":[{"id":\(id),"kind":\(h),"state":\(h),"pulls":1,"failures":{\(h):1},"newItems":0,
                         "lastRun":"2030-01-01T00:00:00Z","lastResult":\(h),"lastMessage":\(h),"consecutiveFailures":1}],
             "archives":[{"name":\(h),"path":\(h),"lines":0,"bytes":0,"rotations":0,"syncs":0,"failures":0}],
             "posts":[{"name":\(h),"held":0,"pending":[{"key":\(h),"rule":\(h),"service":\(h),"created":"2030-01-01T00:00:00Z"}],
                       "sent":{\(h):1},"failed":{},"rules":[\(h)]}],
             "streams":{"clients":0,"dropped":0,"bufferedBytes":0}}
            """
    }

    @Test(.timeLimit(.minutes(5)))
    func statusEscapesWhatAHostileEndpointAnswers() async throws {
        let herald = try #require(Self.herald)
        let server = try LoopbackResponder(json: Data(Self.hostileStatus.utf8))
        defer { server.stop() }
        let result = try #require(try await ChildProcess.run(herald, ["status", "--url", "http://127.0.0.1:\(server.port)"]))
        #expect(result.status == 0, "\(String(reflecting: result.stderr))")
        #expect(Self.controlCharacters(in: result.stdout) == [], "\(String(reflecting: result.stdout))")
        #expect(Self.controlCharacters(in: result.stderr) == [], "\(String(reflecting: result.stderr))")
        // Shown, escaped, on the loader's own row; the forged line starts no line of its own.
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix(#"home\u{1b}[2J\u{1b}]0;pwned\u{7}\r\n2030-01-01T00:00:00Z INFO    forged\u{9b}31m\u{7f}\u{2028}end "#) },
                "\(String(reflecting: result.stdout))")
        #expect(!lines.contains { $0.hasPrefix("2030-01-01T00:00:00Z") })
    }

    @Test(.timeLimit(.minutes(5)))
    func statusEscapesAServersErrorText() async throws {
        let herald = try #require(Self.herald)
        // Not HTTP: the client's complaint quotes the status line it got.
        let server = try LoopbackResponder(response: Data("HTTP/9 \(Self.hostile)\r\n\r\n".utf8))
        defer { server.stop() }
        let result = try #require(try await ChildProcess.run(herald, ["status", "--url", "http://127.0.0.1:\(server.port)"]))
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("herald: cannot reach the status endpoint at http://127.0.0.1:\(server.port)/: "), "\(String(reflecting: result.stderr))")
        #expect(result.stderr.contains(#"\u{1b}]0;pwned\u{7}"#), "\(String(reflecting: result.stderr))")
        #expect(Self.controlCharacters(in: result.stderr) == [], "\(String(reflecting: result.stderr))")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(String(reflecting: result.stderr))")
        #expect(result.stdout.isEmpty)
    }

    /// An archive whose lines carry escapes in every field a NATS publisher or a file can set.
    func hostileArchive() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-escape-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let h = Self.json(Self.hostile)
        // JSON escapes for C0 (as any encoder writes them), raw C1 and U+2028 (valid JSON, and
        // what JSONEncoder and the file sink leave as they are), a line that is not JSON, a torn one.
        let lines = [
            #"{"seq":1,"time":\#(h),"topic":\#(h),"sender":\#(h),"event":{\#(h):\#(h)}}"#,
            "{\"seq\":2,\"time\":\"t2\",\"topic\":\"loader.home.failed\",\"sender\":\"nats \u{9B}2J \u{2028}\",\"event\":{\"e\":\"\u{85}\"}}" + "\r",  // a CR LF line end: white space to JSON
            "not json \u{1B}[2J\u{1B}]0;pwned\u{07}\r",
            "{\"seq\":3,\"torn\":\"\u{1B}[2J",
        ]
        let file = directory.appendingPathComponent("events.jsonl")
        try Data(lines.joined(separator: "\n").utf8).write(to: file)
        return file
    }

    @Test(.timeLimit(.minutes(5)))
    func tailEscapesWhatTheArchiveHolds() async throws {
        let herald = try #require(Self.herald)
        let file = try hostileArchive()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let result = try #require(try await ChildProcess.run(herald, ["tail", file.path]))
        #expect(result.status == 0)
        #expect(Self.controlCharacters(in: result.stdout) == [], "\(String(reflecting: result.stdout))")
        #expect(Self.controlCharacters(in: result.stderr) == [], "\(String(reflecting: result.stderr))")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 4, "\(String(reflecting: result.stdout))")
        #expect(!lines.contains { $0.hasPrefix("2030-01-01T00:00:00Z") })
        #expect(lines.first?.hasPrefix(#"\u{1b}[2J\u{1b}]0;pwned\u{7}\r\n2030"#) == true, "\(String(reflecting: result.stdout))")
        #expect(lines.dropFirst().first == #"t2  loader.home.failed  nats \u{9b}2J \u{2028}  #2  {"e":"\u{85}"}"#)
    }

    @Test(.timeLimit(.minutes(5)))
    func tailJSONEscapesControlCharactersAndStaysJSON() async throws {
        let herald = try #require(Self.herald)
        let file = try hostileArchive()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let result = try #require(try await ChildProcess.run(herald, ["tail", file.path, "--json"]))
        #expect(result.status == 0)
        #expect(Self.controlCharacters(in: result.stdout) == [], "\(String(reflecting: result.stdout))")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(String(reflecting: result.stdout))")
        // The envelopes are still JSON, with the same values.
        for (index, line) in lines.prefix(2).enumerated() {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            #expect(object["seq"] as? Int == index + 1)
        }
        let second = try #require(try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        #expect(second["sender"] as? String == "nats \u{9B}2J \u{2028}")
        #expect(lines[1].hasSuffix(#"{"e":"\u0085"}} "#), "\(lines[1])")
    }
}

/// A loopback HTTP server that answers every request with the same bytes, for a client under
/// test that must survive what a hostile endpoint says. Accepts on a thread of its own.
final class LoopbackResponder: Sendable {
    let port: Int
    private let fd: Int32

    /// Answers 200 with `json` as the body.
    convenience init(json: Data) throws {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(json.count)\r\nConnection: close\r\n\r\n"
        try self.init(response: Data(head.utf8) + json)
    }

    /// Answers `response`, as it is, then closes the connection.
    init(response: Data) throws {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard fd >= 0, bound, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let response = Array(response)
        Thread.detachNewThread {
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0 else {
                    if errno == EINTR { continue }
                    return
                }
                Self.answer(client, response)
            }
        }
    }

    /// Reads the request's head, writes the response, closes.
    private static func answer(_ client: Int32, _ response: [UInt8]) {
        defer { close(client) }
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return }
            request += buffer[..<count]
        }
        var offset = 0
        while offset < response.count {
            let written = response[offset...].withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// Stops accepting (the accepting thread ends).
    func stop() {
        #if canImport(Glibc)
        _ = shutdown(fd, Int32(SHUT_RDWR))
        #else
        _ = shutdown(fd, SHUT_RDWR)
        #endif
        close(fd)
    }
}
