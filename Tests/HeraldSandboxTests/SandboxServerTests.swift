import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@testable import HeraldSandbox
@testable import HeraldHTTP
import HeraldIO
import HeraldTestSupport

@Suite struct SandboxServerTests {
    @Test func digestMatchesRFC2202AndFIPSVectors() {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(SandboxDigest.sha1(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(SandboxDigest.sha1([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(hex(SandboxDigest.hmacSHA1(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
            == "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79")
        #expect(hex(SandboxDigest.hmacSHA1(key: [UInt8](repeating: 0xaa, count: 80),
                                           message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)))
            == "aa4ae5e15272d00e95705637ce8a3b55ed402112")
    }

    @Test func verifierComputesTwittersWorkedExample() {
        let parameters = [
            ("status", "Hello Ladies + Gentlemen, a signed OAuth request!"), ("include_entities", "true"),
            ("oauth_consumer_key", "xvz1evFS4wEEPTGEFPHBog"), ("oauth_nonce", "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg"),
            ("oauth_signature_method", "HMAC-SHA1"), ("oauth_timestamp", "1318622958"),
            ("oauth_token", "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb"), ("oauth_version", "1.0"),
        ]
        let signature = OAuthVerifier.signature(
            method: "POST", baseURL: "https://api.twitter.com/1.1/statuses/update.json", parameters: parameters,
            consumerSecret: "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw", tokenSecret: "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE")
        #expect(signature == "hCtSmYh+iHYCEqBWrE7C7hYmtUk=")
        let header = OAuthVerifier.parseHeader(#"oauth_consumer_key="a%2Bb", realm="x", oauth_nonce="n""#)
        #expect(header?.map(\.0) == ["oauth_consumer_key", "oauth_nonce"])
        #expect(header?.first?.1 == "a+b")
        #expect(OAuthVerifier.parseHeader("oauth_nonce=unquoted") == nil)
    }

    @Test func multipartParserSplitsPartsAndRejectsGarbage() throws {
        let body = Data("--XyZ\r\nContent-Disposition: form-data; name=\"command\"\r\n\r\nAPPEND\r\n--XyZ\r\nContent-Disposition: form-data; name=\"media\"; filename=\"blob\"\r\nContent-Type: application/octet-stream\r\n\r\n\u{0}\r\n--\r\n--XyZ--\r\n".utf8)
        let boundary = try #require(MultipartParser.boundary(of: "multipart/form-data; boundary=\"XyZ\""))
        let parts = try #require(MultipartParser.parse(body, boundary: boundary))
        #expect(parts.map(\.name) == ["command", "media"])
        #expect(parts[0].data == Data("APPEND".utf8))
        #expect(parts[1].data == Data("\u{0}\r\n--".utf8))
        #expect(parts[1].filename == "blob")
        #expect(MultipartParser.parse(Data("--XyZ\r\nno head".utf8), boundary: "XyZ") == nil)
        #expect(MultipartParser.boundary(of: "application/json") == nil)
        // A part whose head runs straight into the next delimiter has no data line: malformed.
        #expect(MultipartParser.parse(Data("--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n--B--\r\n".utf8), boundary: "B") == nil)
        #expect(MultipartParser.parse(Data("--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n\r\n--B--\r\n".utf8), boundary: "B")?.first?.data == Data())
    }

    @Test(.timeLimit(.minutes(5))) func multipartParserSurvivesSeededMutations() {
        let valid = Array("--B\r\nContent-Disposition: form-data; name=\"command\"\r\n\r\nAPPEND\r\n--B\r\nContent-Disposition: form-data; name=\"media\"; filename=\"blob\"\r\n\r\nxy\r\n--B--\r\n".utf8)
        let pieces = [Array("\r\n".utf8), Array("--B".utf8), Array("--".utf8), Array("\r\n\r\n".utf8), Array("name=\"a\"".utf8)]
        var random = SandboxRandom(seed: 0x6D75_6C74)
        var parsed = 0
        for _ in 0..<5000 {
            var bytes = valid
            for _ in 0..<(1 + Int(random.next() % 4)) where !bytes.isEmpty {
                let index = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 3 {
                case 0: bytes.remove(at: index)
                case 1: bytes.insert(contentsOf: pieces[Int(random.next() % UInt64(pieces.count))], at: index)
                default: bytes[index] = UInt8(truncatingIfNeeded: random.next())
                }
            }
            if MultipartParser.parse(Data(bytes), boundary: "B") != nil { parsed += 1 }
        }
        #expect(parsed > 0)
    }

    @Test(.timeLimit(.minutes(5))) func stopReturnsWithConnectionsOpenClosesThemAndReleasesThePort() async throws {
        // Head and idle deadlines of an hour, so that no connection times out before stop()
        // on a slow machine.
        let sandbox = try await Sandbox.start(limits: HTTPServerLimits(headTimeout: .seconds(3600), idleTimeout: .seconds(3600)))
        let port = sandbox.port
        #expect(port > 0)
        // Idle keep-alive connections (URLSession's pool, a raw one) and one halfway through a
        // head must not hold stop() up.
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        _ = try await session.data(from: sandbox.baseURL.appendingPathComponent("_sandbox/health"))
        let idle = try #require(RawClient(port: port))
        idle.send("GET /_sandbox/health HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = await idle.read { $0.hasSuffix(#"{"status":"ok"}"#) }
        let partial = try #require(RawClient(port: port))
        partial.send("GET /_sandbox/health HTTP/1.1\r\n")
        await sandbox.server.waitUntil { $0.connections.count == 3 && $0.connections.contains(.head) }

        await sandbox.stop()
        #expect(await idle.readToEnd().closed)
        #expect(await partial.readToEnd().text.isEmpty)
        // Nothing listens on the port any more: it can be bound again.
        let rebound = try TCPSocket.listen(port: port)
        TCPSocket.close(rebound.socket.descriptor)
        await sandbox.stop()  // a second stop returns too
    }

    @Test func startsOnTheGivenPort() async throws {
        // A port the kernel picked, held by nothing (no connection ever used it).
        let probe = try TCPSocket.listen(port: 0)
        TCPSocket.close(probe.socket.descriptor)
        let sandbox = try await Sandbox.start(SandboxConfiguration(port: probe.port))
        #expect(sandbox.port == probe.port)
        #expect(sandbox.baseURL.absoluteString == "http://127.0.0.1:\(probe.port)")
        let (body, _) = try await URLSession.shared.data(from: sandbox.baseURL.appendingPathComponent("_sandbox/health"))
        #expect(String(decoding: body, as: UTF8.self) == #"{"status":"ok"}"#)
        await sandbox.stop()
    }

    @Test func portInUseIsASandboxError() async throws {
        let sandbox = try await Sandbox.start()
        await #expect(throws: SandboxError.self) { try await Sandbox.start(SandboxConfiguration(port: sandbox.port)) }
        await sandbox.stop()
    }

    @Test func jsonWriterKeepsLargeIntegersExactAndEscapes() {
        let value = SandboxJSON.object([("id", .uint(1_050_118_621_198_921_728)), ("text", .string("a\"b\\c\n\u{1}日本"))])
        #expect(value.serialized() == #"{"id":1050118621198921728,"text":"a\"b\\c\n\u0001日本"}"#)
    }

    @Test func faultPlansRepeatForASeed() {
        let faults = SandboxFaults(seed: 9, serverErrorRate: 0.3, dropRate: 0.3)
        let first = FaultInjector(faults: faults)
        let second = FaultInjector(faults: faults)
        let a = (0..<50).map { _ in first.plan() }.map { [$0.serverError, $0.drop] }
        let b = (0..<50).map { _ in second.plan() }.map { [$0.serverError, $0.drop] }
        #expect(a == b)
        #expect(a.contains([true, false]) && a.contains([false, false]))
    }
}

@Suite struct SandboxLifecycleTests {
    @Test(.timeLimit(.minutes(5))) func waitForRequestsReturnsOnceTheRequestsArriveOrOnStop() async throws {
        let sandbox = try await Sandbox.start()
        let waiting = Task { await sandbox.waitForRequests(2) }
        _ = try await URLSession.shared.data(from: sandbox.baseURL.appendingPathComponent("_sandbox/health"))
        _ = try await URLSession.shared.data(from: sandbox.baseURL.appendingPathComponent("_sandbox/health"))
        await waiting.value
        #expect(sandbox.requestsReceived == 2)
        await sandbox.waitForRequests(1)  // already reached: returns at once

        let never = Task { await sandbox.waitForRequests(100) }
        let cancelled = Task { await sandbox.waitForRequests(100) }
        cancelled.cancel()
        await cancelled.value
        await sandbox.stop()
        await never.value
        #expect(sandbox.requestsReceived == 2)
    }

    @Test func runServesUntilItsTaskIsCancelled() async throws {
        let sandbox = try await Sandbox.start()
        let running = Task { await sandbox.run() }
        let (body, _) = try await URLSession.shared.data(from: sandbox.baseURL.appendingPathComponent("_sandbox/health"))
        #expect(!body.isEmpty)
        #expect(sandbox.requestsReceived == 1)
        running.cancel()
        await running.value
        await #expect(throws: (any Error).self) {
            _ = try await URLSession.shared.data(from: sandbox.baseURL.appendingPathComponent("_sandbox/health"))
        }
    }
}
