import Foundation
import HeraldSandbox
import HeraldServices
import Testing
import HeraldTestSupport

@Suite struct ConcurrencyTests {
    @Test func manyConcurrentCallsAcrossServicesAllSucceed() async throws {
        try await SandboxHarness.run({ $0.homeTimelineLimit = 1000 }) { harness in
            let twitter = harness.twitter()
            let tiqav = harness.tiqav()
            let baas = harness.baas()
            let results = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        switch index % 4 {
                        case 0: return try await twitter.homeTimeline(TimelineQuery(count: 5)).statuses.count
                        case 1: return try await tiqav.random().count
                        case 2: return try await baas.create(bucket: "load", fields: ["n": .number(Double(index))]).fields.count
                        default: return try await twitter.update(status: "concurrent \(index)").text.isEmpty ? 0 : 1
                        }
                    }
                }
                var collected: [Int] = []
                for try await value in group { collected.append(value) }
                return collected
            }
            #expect(results.count == 40)
            #expect(results.allSatisfy { $0 > 0 })
            #expect(harness.sandbox.posts().count == 10)
            #expect(try await baas.query(bucket: "load", BaaSQuery(includeCount: true)).count == 10)
        }
    }
}
