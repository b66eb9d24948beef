import Foundation
@testable import HeraldCluster
import HeraldTestSupport
import Testing
import HeraldTesting

/// The values nodes leave for each other in the key-value buckets keep the bytes every Herald
/// version wrote (a mixed-version cluster shares one bucket): a lease's holder and a post's record.
@Suite struct ClusterWireFormatTests {
    @Test func aLeaseValueIsTheLoaderAndTheNodeKeysSorted() async throws {
        let clock = ManualClock()
        let bucket = InMemoryKeyValue(name: "leases", ttl: .seconds(15), clock: clock)
        let lease = LoaderLease(loader: "home", node: "a", ttl: .seconds(15), bucket: bucket, clock: clock)
        #expect(await lease.refresh() == .acquired)
        let stored = try #require(try await bucket.get("loader.home"))
        #expect(String(decoding: stored.value, as: UTF8.self) == #"{"loader":"home","node":"a"}"#)
        #expect(LoaderLease<ManualClock>.holder(in: Array(#"{"loader":"home","node":"b"}"#.utf8)) == "b")
        #expect(LoaderLease<ManualClock>.holder(in: Array("not json".utf8)) == nil)
    }

    @Test func aPostRecordIsWhatJSONSerializationWroteBefore() throws {
        for id in ["1050118621198921728", "https://example.com/posts/1", nil] as [String?] {
            let record = PostRecord(key: "tweet:item:loader.todos:t/1", result: .sent, node: "a", id: id)
            var object: [String: Any] = ["key": record.key, "result": "sent", "node": "a"]
            if let id { object["id"] = id }
            let before = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            #expect(record.encoded == Array(before))
            #expect(PostRecord(decoding: Array(before)) == record)
        }
        let failed = PostRecord(key: "k", result: .failed, node: "b", id: nil)
        #expect(String(decoding: try #require(failed.encoded), as: UTF8.self) == #"{"key":"k","node":"b","result":"failed"}"#)
        #expect(PostRecord(decoding: Array(#"{"key":"k","node":"b","result":"maybe"}"#.utf8)) == nil)
    }

    /// The cluster's events keep their JSON (the archive and other nodes read it): the kinds,
    /// now enums, encode as the strings they were.
    @Test func clusterEventKindsEncodeAsTheirStrings() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        func json(_ value: some Encodable) throws -> String { String(decoding: try encoder.encode(value), as: UTF8.self) }
        #expect(try json(ClusterLeaseChanged(loader: "home", node: "a", change: .lost, reason: "expired"))
                == #"{"change":"lost","loader":"home","node":"a","reason":"expired"}"#)
        #expect(try json(ClusterConnectionChanged(node: "a", kind: .lameduck, detail: "s"))
                == #"{"detail":"s","kind":"lameduck","node":"a"}"#)
        #expect(try json(ClusterExportProblem(eventTopic: "t", eventID: "i", outcome: .skipped, reason: "r", attempts: 0))
                == #"{"attempts":0,"eventID":"i","eventTopic":"t","outcome":"skipped","reason":"r"}"#)
        #expect(ClusterLeaseChanged(loader: "home", node: "a", change: .acquired).topic == "cluster.lease.home.acquired")
        #expect(ClusterConnectionChanged(node: "a", kind: .disconnected, detail: "").topic == "cluster.connection.disconnected")
        #expect(ClusterExportProblem(eventTopic: "t", eventID: "i", outcome: .retrying, reason: "r", attempts: 1).topic == "cluster.export.retrying")
    }
}
