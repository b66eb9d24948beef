import Foundation
import HeraldSandbox
import HeraldServices
import Testing
import HeraldTestSupport

@Suite struct FaultInjectionTests {
    @Test func serverErrorsAreHTTPStatusErrorsWithTheServiceCode() async throws {
        try await SandboxHarness.run({ $0.faults = SandboxFaults(serverErrorRate: 1) }) { harness in
            let error = await serviceError { try await harness.twitter().homeTimeline() }
            #expect(error?.kind == .httpStatus)
            #expect([500, 503].contains(error?.status ?? 0))
            #expect(error?.hasAPIError(code: 131) == true)
            let tiqavError = await serviceError { try await harness.tiqav().random() }
            #expect(tiqavError?.kind == .httpStatus)
        }
    }

    @Test func injected503CarriesRetryAfterAsTheResetTime() async throws {
        try await SandboxHarness.run({ $0.faults = SandboxFaults(seed: 7, serverErrorRate: 1) }) { harness in
            var statuses: Set<Int> = []
            for _ in 0..<16 {
                let before = Date()
                let error = await serviceError { try await harness.tiqav().random() }
                let after = Date()
                let status = try #require(error?.status)
                statuses.insert(status)
                if status == 503 {
                    let reset = try #require(error?.rateLimit?.reset)
                    #expect(reset >= before.addingTimeInterval(2) && reset <= after.addingTimeInterval(2))
                    #expect(error?.description.contains("resets at") == true)
                } else {
                    #expect(error?.rateLimit == nil)
                }
            }
            #expect(statuses == [500, 503])
        }
    }

    @Test func droppedConnectionsAreTransportErrors() async throws {
        try await SandboxHarness.run({ $0.faults = SandboxFaults(dropRate: 1) }) { harness in
            let error = await serviceError { try await harness.tiqav().random() }
            #expect(error?.kind == .transport)
            #expect(error?.underlying != nil)
        }
    }

    @Test func truncatedBodiesAreDecodeErrorsInJSONAndXML() async throws {
        try await SandboxHarness.run({ $0.faults = SandboxFaults(truncateRate: 1) }) { harness in
            let json = await serviceError { try await harness.twitter().homeTimeline() }
            #expect(json?.kind == .decoding)
            let xml = await serviceError { try await harness.twitter().homeTimeline(format: .xml) }
            #expect(xml?.kind == .decoding)
            #expect(xml?.location != nil)
            let baas = await serviceError { try await harness.baas().create(bucket: "b", fields: ["a": .string("b")]) }
            #expect(baas?.kind == .decoding)
        }
    }

    @Test func malformedBodiesAreDecodeErrors() async throws {
        try await SandboxHarness.run({ $0.faults = SandboxFaults(malformRate: 1) }) { harness in
            let json = await serviceError { try await harness.tiqav().random() }
            #expect(json?.kind == .decoding)
            #expect(json?.bodyExcerpt?.hasPrefix("<") == true)
            let xml = await serviceError { try await harness.twitter().homeTimeline(format: .xml) }
            #expect(xml?.kind == .decoding)
        }
    }

    @Test func wrongShapeEmptyBodyAndWrongContentTypeAreDecodeErrors() async throws {
        try await SandboxHarness.run({ $0.faults = SandboxFaults(malformRate: 1, malformation: .wrongShape) }) { harness in
            let tiqav = await serviceError { try await harness.tiqav().random() }
            #expect(tiqav?.kind == .decoding)
            #expect(tiqav?.location == "(root)")
            #expect(tiqav?.bodyExcerpt?.hasPrefix("{") == true)
            let xml = await serviceError { try await harness.twitter().homeTimeline(format: .xml) }
            #expect(xml?.kind == .decoding)
            let posted = await serviceError { try await harness.twitter().update(status: "shape") }
            #expect(posted?.kind == .decoding)
            let baas = await serviceError { try await harness.baas().query(bucket: "todos") }
            #expect(baas?.kind == .decoding)
        }
        try await SandboxHarness.run({ $0.faults = SandboxFaults(malformRate: 1, malformation: .emptyBody) }) { harness in
            let json = await serviceError { try await harness.twitter().homeTimeline() }
            #expect(json?.kind == .decoding)
            #expect(json?.location == "body")
            let xml = await serviceError { try await harness.twitter().userTimeline(screenName: "TwitterDev", format: .xml) }
            #expect(xml?.kind == .decoding)
        }
        try await SandboxHarness.run({ $0.faults = SandboxFaults(malformRate: 1, malformation: .wrongContentType) }) { harness in
            let json = await serviceError { try await harness.tiqav().search("cat") }
            #expect(json?.kind == .decoding)
            #expect(json?.location == "Content-Type")
            let xml = await serviceError { try await harness.twitter().homeTimeline(format: .xml) }
            #expect(xml?.location == "Content-Type")
        }
    }

    @Test func slowDripBodiesArriveWholeOrHitTheDeadline() async throws {
        let drip = SandboxFaults(dripRate: 1, dripChunkSize: 256, dripPause: .milliseconds(2))
        try await SandboxHarness.run({ $0.faults = drip }) { harness in
            let images = try await harness.tiqav().random()
            #expect(images.count == 5)
        }
        // A pause of an hour between chunks (stop interrupts it): only the deadline can end
        // the request, however loaded the machine.
        let slow = SandboxFaults(dripRate: 1, dripChunkSize: 8, dripPause: .seconds(3_600))
        try await SandboxHarness.run({ $0.faults = slow }) { harness in
            let error = await serviceError { try await harness.tiqav(timeout: .milliseconds(150)).random() }
            #expect(error?.kind == .timeout)
        }
    }

    @Test func latencyBeyondTheDeadlineIsATimeout() async throws {
        // An hour of latency (stop interrupts it): only the deadline can end the request,
        // however late its timer fires on a loaded machine.
        try await SandboxHarness.run({ $0.faults = SandboxFaults(latency: .seconds(3_600)) }) { harness in
            let error = await serviceError { try await harness.tiqav(timeout: .milliseconds(100)).random() }
            #expect(error?.kind == .timeout)
        }
        try await SandboxHarness.run({ $0.faults = SandboxFaults(latency: .milliseconds(20)) }) { harness in
            let images = try await harness.tiqav().random()
            #expect(images.count == 5)
        }
    }

    @Test func faultsRepeatForTheSameSeed() async throws {
        func outcomes(seed: UInt64) async throws -> [Bool] {
            try await SandboxHarness.run({ $0.faults = SandboxFaults(seed: seed, serverErrorRate: 0.5) }) { harness in
                var results: [Bool] = []
                for _ in 0..<16 {
                    results.append(await serviceError { try await harness.tiqav().random() } == nil)
                }
                return results
            }
        }
        let first = try await outcomes(seed: 42)
        #expect(try await outcomes(seed: 42) == first)
        #expect(first.contains(true) && first.contains(false))
    }

    @Test func sandboxControlPathsAreNeverFaulted() async throws {
        try await SandboxHarness.run({ $0.faults = SandboxFaults(serverErrorRate: 1, dropRate: 1) }) { harness in
            let response = try await harness.transport.send(HTTPRequest(url: harness.sandbox.baseURL.appendingPathComponent("_sandbox/posts")))
            #expect(response.status == 200)
        }
    }
}
