import Foundation
import Testing

@testable import HeraldSandbox

/// The server's HTTP/1.1 reading, driven byte by byte over a real socket.
@Suite struct HTTPParsingTests {
    private func occurrences(of needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    @Test func pipelinedRequestsOnOneConnectionGetAnswersInOrder() async throws {
        let sandbox = try await Sandbox.start()
        let client = try #require(RawClient(port: sandbox.port))
        client.send("GET /_sandbox/health HTTP/1.1\r\nHost: x\r\n\r\nGET /search.json?q=cat HTTP/1.1\r\nHost: x\r\n\r\n")
        let text = client.read { self.occurrences(of: "HTTP/1.1 200 OK", in: $0) == 2 && $0.hasSuffix("]") }
        #expect(occurrences(of: "HTTP/1.1 200 OK", in: text) == 2)
        #expect(text.contains("Connection: keep-alive"))
        #expect(text.range(of: "{\"status\":\"ok\"}")?.lowerBound ?? text.endIndex < text.range(of: "\"3om\"")?.lowerBound ?? text.startIndex)
        await sandbox.stop()
    }

    @Test func http10RequestsCloseTheConnectionByDefault() async throws {
        let sandbox = try await Sandbox.start()
        let client = try #require(RawClient(port: sandbox.port))
        client.send("GET /_sandbox/health HTTP/1.0\r\n\r\n")
        let text = client.read { _ in false }
        #expect(text.hasPrefix("HTTP/1.1 200 OK"))
        #expect(text.contains("Connection: close"))
        await sandbox.stop()
    }

    @Test func chunkedBodyWithExtensionsAndTrailersIsReassembled() async throws {
        let sandbox = try await Sandbox.start()
        let client = try #require(RawClient(port: sandbox.port))
        let json = #"{"description":"chunky"}"#
        let first = String(json.prefix(10))
        let rest = String(json.dropFirst(10))
        client.send(
            "POST /1/sandbox-tenant/objects/todos HTTP/1.1\r\nHost: x\r\nX-Application-Id: sandbox-app-id\r\n"
                + "X-Application-Key: sandbox-app-key\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                + "Connection: close\r\n\r\n"
                + "\(String(first.utf8.count, radix: 16));name=value\r\n\(first)\r\n\(String(rest.utf8.count, radix: 16))\r\n\(rest)\r\n"
                + "0\r\nX-Trailer: yes\r\n\r\n")
        let text = client.read { _ in false }
        #expect(text.hasPrefix("HTTP/1.1 201 Created"))
        #expect(text.contains(#""description":"chunky""#))
        #expect(text.contains("Connection: close"))
        await sandbox.stop()
    }

    @Test func malformedRequestsAreAnswered400AndClosed() async throws {
        let sandbox = try await Sandbox.start()
        for garbage in ["NONSENSE\r\n\r\n", "GET / HTTP/1.1\r\nno colon here\r\n\r\n",
                        "POST /1.1/x HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
                        "POST /1/t/objects/b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"] {
            let client = try #require(RawClient(port: sandbox.port))
            client.send(garbage)
            let text = client.read { _ in false }
            #expect(text.hasPrefix("HTTP/1.1 400 Bad Request"), "for \(garbage.debugDescription)")
        }
        let oversized = try #require(RawClient(port: sandbox.port))
        oversized.send("GET / HTTP/1.1\r\nX-Big: " + String(repeating: "a", count: 70_000) + "\r\n\r\n")
        #expect(oversized.read { _ in false }.hasPrefix("HTTP/1.1 413"))
        // The server is still fine afterwards.
        let client = try #require(RawClient(port: sandbox.port))
        client.send("GET /_sandbox/health HTTP/1.1\r\nConnection: close\r\n\r\n")
        #expect(client.read { _ in false }.hasSuffix(#"{"status":"ok"}"#))
        await sandbox.stop()
    }

    @Test func hugeChunkSizesAfterAChunkAre413NotACrash() async throws {
        let sandbox = try await Sandbox.start()
        for size in ["7fffffffffffffff", "ffffffffffffffff0"] {
            let client = try #require(RawClient(port: sandbox.port))
            client.send("POST /1/sandbox-tenant/objects/todos HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "1\r\na\r\n\(size)\r\n")
            let text = client.read { _ in false }
            #expect(text.hasPrefix("HTTP/1.1 413") || text.hasPrefix("HTTP/1.1 400"), "for chunk size \(size)")
        }
        let client = try #require(RawClient(port: sandbox.port))
        client.send("GET /_sandbox/health HTTP/1.1\r\nConnection: close\r\n\r\n")
        #expect(client.read { _ in false }.hasSuffix(#"{"status":"ok"}"#))
        await sandbox.stop()
    }

    @Test func seededRandomRequestBytesNeverBringTheServerDown() async throws {
        let sandbox = try await Sandbox.start()
        var random = SandboxRandom(seed: 2026)
        let seed = Array("POST /1.1/media/upload.json?command=STATUS HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n".utf8)
        for _ in 0..<60 {
            var bytes = seed
            for _ in 0..<(1 + Int(random.next() % 6)) {
                bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
            }
            let client = try #require(RawClient(port: sandbox.port))
            client.send(String(decoding: bytes, as: UTF8.self) + "\r\n\r\n")
            client.shutdownWriting()
            _ = client.read { _ in false }
        }
        let client = try #require(RawClient(port: sandbox.port))
        client.send("GET /_sandbox/health HTTP/1.1\r\nConnection: close\r\n\r\n")
        #expect(client.read { _ in false }.hasSuffix(#"{"status":"ok"}"#))
        await sandbox.stop()
    }
}
