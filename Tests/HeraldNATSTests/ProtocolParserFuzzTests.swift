import HeraldTestSupport
import Testing
@testable import HeraldNATS

/// The parser is fed arbitrary splits of the stream: valid streams parse the same at every split,
/// garbage and torn frames give a ``NATSProtocolError`` and never trap.
struct ProtocolParserFuzzTests {
    static let validStream: [UInt8] = {
        var bytes: [UInt8] = []
        bytes += Array("INFO {\"server_id\":\"X\",\"version\":\"2.9.10\",\"max_payload\":1048576,\"headers\":true}\r\n".utf8)
        bytes += Array("PING\r\n".utf8)
        bytes += Array("MSG orders.new 1 5\r\nhello\r\n".utf8)
        bytes += Array("MSG orders.new 12 reply.to 0\r\n\r\n".utf8)
        bytes += Array("msg lower.case 3 4\r\n\r\n\r\n\r\n".utf8)
        let block = "NATS/1.0\r\nNats-Msg-Id: 42\r\nHerald-Node: a\r\n\r\n"
        bytes += Array("HMSG herald.loader 2 _INBOX.abc.1 \(block.utf8.count) \(block.utf8.count + 4)\r\n\(block)body\r\n".utf8)
        let status = "NATS/1.0 503\r\n\r\n"
        bytes += Array("HMSG _INBOX.abc.2 3 \(status.utf8.count) \(status.utf8.count)\r\n\(status)\r\n".utf8)
        let noMessages = "NATS/1.0 404 No Messages\r\n\r\n"
        bytes += Array("HMSG _INBOX.abc.3 3 \(noMessages.utf8.count) \(noMessages.utf8.count)\r\n\(noMessages)\r\n".utf8)
        bytes += Array("+OK\r\nPONG\r\n-ERR 'Invalid Subject'\r\n".utf8)
        bytes += Array("MSG big 9 300\r\n".utf8) + [UInt8](repeating: UInt8(ascii: "z"), count: 300) + [13, 10]
        return bytes
    }()

    static func parse(_ pieces: [ArraySlice<UInt8>], maxControlLine: Int = 4096) -> (operations: [NATSServerOperation], error: NATSProtocolError?) {
        var parser = NATSProtocolParser(maxControlLine: maxControlLine, maxPayload: 64 * 1024)
        var operations: [NATSServerOperation] = []
        do {
            for piece in pieces {
                parser.feed(piece)
                while let operation = try parser.next() { operations.append(operation) }
            }
        } catch {
            return (operations, error)
        }
        return (operations, nil)
    }

    @Test func validStreamParsesToItsOperations() throws {
        let (operations, error) = Self.parse([Self.validStream[...]])
        #expect(error == nil)
        #expect(operations.count == 12)
        guard operations.count == 12 else { return }
        #expect(operations[1] == .ping)
        #expect(operations[2] == .message(NATSMessage(subject: "orders.new", payload: Array("hello".utf8), subscriptionID: 1)))
        #expect(operations[3] == .message(NATSMessage(subject: "orders.new", replyTo: "reply.to", payload: [], subscriptionID: 12)))
        #expect(operations[4] == .message(NATSMessage(subject: "lower.case", payload: [13, 10, 13, 10], subscriptionID: 3)))
        guard case .message(let withHeaders) = operations[5] else { Issue.record("not a message"); return }
        #expect(withHeaders.headers?["Nats-Msg-Id"] == "42")
        #expect(withHeaders.headers?["herald-node"] == "a")
        #expect(withHeaders.string == "body")
        #expect(withHeaders.replyTo == "_INBOX.abc.1")
        guard case .message(let noResponders) = operations[6], case .message(let noMessages) = operations[7] else { return }
        #expect(noResponders.status == 503)
        #expect(noMessages.status == 404)
        #expect(noMessages.headers?.statusDescription == "No Messages")
        #expect(Array(operations[8...10]) == [.ok, .pong, .error("Invalid Subject")])
    }

    @Test func everySplitInTwoParsesIdentically() {
        let whole = Self.parse([Self.validStream[...]]).operations
        for cut in 0...Self.validStream.count {
            let split = Self.parse([Self.validStream[..<cut], Self.validStream[cut...]])
            #expect(split.error == nil, "split at \(cut)")
            #expect(split.operations == whole, "split at \(cut)")
        }
    }

    @Test func randomSplitsIncludingSingleBytesParseIdentically() {
        let whole = Self.parse([Self.validStream[...]]).operations
        var random = SeededGenerator(seed: 0x4E41_5453)
        for round in 0..<300 {
            var pieces: [ArraySlice<UInt8>] = []
            var index = 0
            while index < Self.validStream.count {
                let length = round % 10 == 0 ? 1 : Int.random(in: 1...40, using: &random)
                let end = min(Self.validStream.count, index + length)
                pieces.append(Self.validStream[index..<end])
                index = end
            }
            let split = Self.parse(pieces)
            #expect(split.error == nil && split.operations == whole, "round \(round)")
        }
    }

    @Test func truncatedStreamsWaitForMoreWithoutError() {
        let whole = Self.parse([Self.validStream[...]]).operations
        for cut in 0..<Self.validStream.count {
            let torn = Self.parse([Self.validStream[..<cut]])
            #expect(torn.error == nil)
            #expect(Array(whole.prefix(torn.operations.count)) == torn.operations)
        }
    }

    @Test func randomGarbageGivesAParseErrorAndNeverTraps() {
        var random = SeededGenerator(seed: 0x6761_7262)
        var errors = 0
        for _ in 0..<500 {
            let count = Int.random(in: 600...2000, using: &random)
            let garbage = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            let result = Self.parse([garbage[...]], maxControlLine: 512)
            if result.error != nil { errors += 1 }
        }
        #expect(errors == 500)
    }

    @Test func mutatedFramesNeverTrapAndBadOnesNameTheirOffset() {
        var random = SeededGenerator(seed: 0x6D75_7461)
        var failures = 0
        for _ in 0..<2000 {
            var stream = Self.validStream
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let position = Int.random(in: 0..<stream.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: stream[position] = UInt8.random(in: 0...255, using: &random)
                case 1: stream.remove(at: position)
                default: stream.insert(UInt8.random(in: 0...255, using: &random), at: position)
                }
            }
            let result = Self.parse([stream[...]])
            if let error = result.error {
                failures += 1
                #expect(error.offset >= 0 && error.offset <= stream.count)
                #expect(!error.reason.isEmpty)
            }
        }
        #expect(failures > 0)
    }

    /// A header block that cannot be read is the message's problem: the frame around it is
    /// whole, so the message is handed over without headers (saying why) and the stream goes on.
    @Test func malformedHeaderBlocksAreDeliveredAsMalformedMessagesAndTheStreamGoesOn() {
        var text = ""
        for block in malformedHeaderBlocks + [""] {
            text += "HMSG herald.bad 1 \(block.utf8.count) \(block.utf8.count + 2)\r\n\(block)hi\r\n"
        }
        text += "MSG herald.good 1 2\r\nok\r\n"
        let bytes = Array(text.utf8)
        let whole = Self.parse([bytes[...]])
        #expect(whole.error == nil, "\(String(describing: whole.error))")
        #expect(whole.operations.count == malformedHeaderBlocks.count + 2)
        for (index, operation) in whole.operations.dropLast().enumerated() {
            guard case .message(let message) = operation else {
                Issue.record("operation \(index) is not a message")
                continue
            }
            #expect(message.headers == nil && message.string == "hi", "message \(index)")
            #expect(message.headerProblem?.contains("on 'herald.bad'") == true, "message \(index): \(message.headerProblem ?? "nil")")
        }
        #expect(whole.operations.last == .message(NATSMessage(subject: "herald.good", payload: Array("ok".utf8), subscriptionID: 1)))
        for cut in 0...bytes.count {
            #expect(Self.parse([bytes[..<cut], bytes[cut...]]).operations == whole.operations, "split at \(cut)")
        }
    }

    /// A message larger than the maximum payload (64 KiB here) is read and dropped as it comes:
    /// the parser never holds more than what one read brought, and hands the message over without
    /// its bytes (``NATSMessage/oversize``), at every split of the stream. Before: a protocol error
    /// at its control line, which cost the connection.
    @Test func aMessageLargerThanTheMaximumPayloadIsPassedOverWithoutBeingBuffered() {
        let block = "NATS/1.0\r\nNats-Msg-Id: 1\r\n\r\n"
        var bytes = Array("MSG herald.big 1 $JS.ACK.HERALD.a.1.1.1.0.0 300000\r\n".utf8) + [UInt8](repeating: 65, count: 300_000) + [13, 10]
        bytes += Array("HMSG herald.bigger 2 \(block.utf8.count) 200000\r\n\(block)".utf8)
        bytes += [UInt8](repeating: 66, count: 200_000 - block.utf8.count) + [13, 10]
        bytes += Array("MSG herald.good 1 2\r\nok\r\n".utf8)
        let expected: [NATSServerOperation] = [
            .message(NATSMessage(subject: "herald.big", replyTo: "$JS.ACK.HERALD.a.1.1.1.0.0", payload: [], subscriptionID: 1, oversize: 300_000)),
            .message(NATSMessage(subject: "herald.bigger", payload: [], subscriptionID: 2, oversize: 200_000)),
            .message(NATSMessage(subject: "herald.good", payload: Array("ok".utf8), subscriptionID: 1)),
        ]
        var random = SeededGenerator(seed: 0x0B16)
        for round in 0..<40 {
            var parser = NATSProtocolParser(maxControlLine: 4096, maxPayload: 64 * 1024)
            var operations: [NATSServerOperation] = []
            var index = 0
            var largestPiece = 0
            var mostHeld = 0
            while index < bytes.count {
                let length = round == 0 ? bytes.count : Int.random(in: 1...(round % 2 == 0 ? 16 : 70_000), using: &random)
                let end = min(bytes.count, index + length)
                largestPiece = max(largestPiece, end - index)
                parser.feed(bytes[index..<end])
                index = end
                mostHeld = max(mostHeld, parser.bufferedCount)
                do {
                    while let operation = try parser.next() { operations.append(operation) }
                } catch {
                    Issue.record("round \(round): \(error)")
                    break
                }
                mostHeld = max(mostHeld, parser.bufferedCount)
            }
            #expect(operations == expected, "round \(round)")
            if round > 0 {
                // What one read brought, and at most a control line left over from the one before.
                #expect(mostHeld <= largestPiece + 4096, "round \(round): held \(mostHeld) bytes")
            }
        }
    }

    @Test func specificTornFramesAreTypedErrors() {
        let cases: [(String, String)] = [
            ("MSG a 1 5\r\nhelloXY", "not followed by CRLF"),
            ("MSG a x 5\r\nhello\r\n", "subscription id"),
            ("MSG a 1 -5\r\n", "size"),
            ("MSG a 1 99999999\r\n", "maximum payload"),
            ("MSG a 1 70000\r\n" + String(repeating: "x", count: 70_000) + "XY", "not followed by CRLF"),
            ("MSG a\r\n", "arguments"),
            ("HMSG a 1 20 10\r\n", "exceeds its total"),
            ("FOO bar\r\n", "not a NATS server operation"),
            ("INFO nope\r\n", "JSON"),
        ]
        for (text, expected) in cases {
            let result = Self.parse([Array(text.utf8)[...]])
            #expect(result.error?.reason.contains(expected) == true, "\(text.debugDescription): \(String(describing: result.error))")
        }
        let long = [UInt8](repeating: UInt8(ascii: "A"), count: 5000)
        #expect(Self.parse([long[...]]).error?.reason.contains("longer than") == true)
    }
}
