import Foundation
import Herald
import HeraldCluster
import Testing

private struct Ping: Event, Hashable {
    static let topic: Topic = "loader.home.finished"
    var topic: Topic { Self.topic }
    var id: Int64
    var text: String
    var at: Date
}

@Suite struct EventCodecTests {
    private let bus = UUID(uuidString: "0B1E62A3-2F5D-4C36-9A84-0E3C0C6F3A11")!
    private func envelope(_ event: any Event = Ping(id: 1_050_118_621_198_921_728, text: "héllo \"q\"", at: Date(timeIntervalSince1970: 1_700_000_000.25)),
                          sender: Sender? = "loader.home") -> Envelope<any Event> {
        let id = EventID(bus: bus, sequence: 42)
        return Envelope(topic: event.topic, sender: sender, id: id, correlationID: EventID(bus: bus, sequence: 40),
                        timestamp: Date(timeIntervalSince1970: 1_700_000_001), event: event)
    }

    @Test func anEventIsExportedOnItsSubjectWithItsIdNodeSenderAndCorrelationAsHeadersAndTheArchivesObjectAsBody() throws {
        let message = try ClusterEventCodec(node: "a").message(for: envelope())
        #expect(message.subject == "herald.loader.home.finished")
        #expect(message.header("Nats-Msg-Id") == "0b1e62a3-2f5d-4c36-9a84-0e3c0c6f3a11:42")
        #expect(message.header("herald-node") == "a")
        #expect(message.header("Herald-Sender") == "loader.home")
        #expect(message.header("Herald-Correlation") == "0b1e62a3-2f5d-4c36-9a84-0e3c0c6f3a11:40")
        let text = String(decoding: message.payload, as: UTF8.self)
        #expect(text == #"{"seq":42,"time":"2023-11-14T22:13:21.000Z","topic":"loader.home.finished","sender":"loader.home","id":"0b1e62a3-2f5d-4c36-9a84-0e3c0c6f3a11:42","correlation":"0b1e62a3-2f5d-4c36-9a84-0e3c0c6f3a11:40","event":{"id":1050118621198921728,"text":"héllo \"q\"","at":"2023-11-14T22:13:20.250Z"}}"#)
    }

    @Test func anotherNodesMessageBecomesARemoteEventMarkedWithItsNodeWithExactNumbers() throws {
        let message = try ClusterEventCodec(node: "a").message(for: envelope())
        let decoded = ClusterEventCodec(node: "b").decode(message)
        guard case .event(let remote, let sender, let correlation) = decoded else {
            Issue.record("not imported: \(decoded)")
            return
        }
        #expect(remote.topic == "loader.home.finished")
        #expect(remote.node == "a")
        #expect(sender == "loader.home")
        #expect(correlation == EventID(bus: bus, sequence: 40))
        #expect(remote.origin.id == "0b1e62a3-2f5d-4c36-9a84-0e3c0c6f3a11:42" && remote.origin.seq == 42)
        #expect(remote.origin.time == Date(timeIntervalSince1970: 1_700_000_001))
        #expect(remote.event["id"] == .integer(1_050_118_621_198_921_728))
        #expect(remote.event["text"] == .string("héllo \"q\""))
    }

    @Test func aNodeRecognisesItsOwnMessages() throws {
        let message = try ClusterEventCodec(node: "a").message(for: envelope())
        #expect(ClusterEventCodec(node: "a").decode(message) == .own)
    }

    @Test func aWellFormedObjectFromAProgramThatIsNotANodeIsImportedAsExternal() {
        let message = ClusterMessage(subject: "herald.orders.created", payload: Array(#"{"event":{"order":7}}"#.utf8))
        guard case .event(let remote, let sender, let correlation) = ClusterEventCodec(node: "a").decode(message) else {
            Issue.record("not imported")
            return
        }
        #expect(remote.node == "external" && remote.topic == "orders.created" && sender == nil && correlation == nil)
        #expect(remote.event == .object(["order": .integer(7)]))
    }

    @Test(arguments: [
        ("herald.orders.created", "not json", "the body is not JSON"),
        ("herald.orders.created", "[1,2]", "the body is not a JSON object"),
        ("herald.orders.created", #"{"order":7}"#, #"the body has no "event" member (a Herald event object is {"topic", "event", …})"#),
        ("herald.orders.created", #"{"event":{},"topic":"orders.deleted"}"#, #"the body's topic "orders.deleted" is not the subject's (orders.created)"#),
        ("herald.orders.created", #"{"event":{},"seq":-1}"#, #""seq" is not a whole number"#),
        ("herald.orders.created", #"{"event":{},"time":"yesterday"}"#, #""time" is not an ISO 8601 date"#),
        ("herald.orders.created", #"{"event":{},"correlation":"x"}"#, #"the correlation "x" is not an event id (<uuid>:<sequence>)"#),
        ("herald.orders.created", #"{"event":{},"sender":7}"#, #""sender" is not a non-empty string"#),
        ("herald.", #"{"event":{}}"#, #"the subject "herald." is not herald.<topic>"#),
        ("other.orders", #"{"event":{}}"#, #"the subject "other.orders" is not herald.<topic>"#),
    ])
    func aMalformedMessageIsNamedWithItsReason(subject: String, body: String, reason: String) {
        let decoded = ClusterEventCodec(node: "a").decode(ClusterMessage(subject: subject, payload: Array(body.utf8)))
        #expect(decoded == .malformed(reason))
    }

    @Test func aBadNodeHeaderIsMalformedNotTrusted() {
        let message = ClusterMessage(subject: "herald.x", headers: [.init("Herald-Node", "a b")], payload: Array(#"{"event":{}}"#.utf8))
        #expect(ClusterEventCodec(node: "a").decode(message) == .malformed(#"the Herald-Node header "a b" is not a node name"#))
    }
}
