import Foundation
import HeraldSandbox
import HeraldServices
import Testing
import HeraldTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What Herald's own clients make of the sandbox's scripted outcomes: the errors a retrying
/// poster will meet.
@Suite struct ScriptedFaultClientTests {
    @Test(.timeLimit(.minutes(5))) func aScriptedPostFailsAsScriptedThenPosts() async throws {
        try await SandboxHarness.run { harness in
            let twitter = harness.twitter()
            _ = try await twitter.homeTimeline()  // a kept-alive connection the drop must not hide behind
            try harness.sandbox.script(path: "/1.1/statuses/update.json", [.status(503), .status(429), .drop, .status(401), .status(403, code: 187)])

            let unavailable = await serviceError { try await twitter.update(status: "scheduled") }
            #expect(unavailable?.kind == .httpStatus)
            #expect(unavailable?.status == 503)
            #expect(unavailable?.hasAPIError(code: 131) == true)

            let limited = await serviceError { try await twitter.update(status: "scheduled") }
            #expect(limited?.kind == .rateLimited)
            #expect(limited?.hasAPIError(code: 88) == true)
            #expect(limited?.rateLimit?.reset == harness.time.now.addingTimeInterval(1))
            #expect(limited?.rateLimit?.remaining == 0)

            let dropped = await serviceError { try await twitter.update(status: "scheduled") }
            #expect(dropped?.kind == .transport)

            let refused = await serviceError { try await twitter.update(status: "scheduled") }
            #expect(refused?.status == 401)
            #expect(refused?.hasAPIError(code: 32) == true)
            let duplicate = await serviceError { try await twitter.update(status: "scheduled") }
            #expect(duplicate?.status == 403)
            #expect(duplicate?.hasAPIError(code: 187) == true)
            #expect(harness.sandbox.posts().isEmpty)

            let posted = try await twitter.update(status: "scheduled")
            #expect(posted.text == "scheduled")
            #expect(harness.sandbox.posts().map(\.text) == ["scheduled"])
        }
    }

    /// A drop scripted over HTTP by another process still meets this client's next request on
    /// a fresh connection: libcurl would otherwise resend it and consume the next outcome.
    @Test(.timeLimit(.minutes(5))) func aDropScriptedOverHTTPIsSeenEvenOnAKeptAliveConnection() async throws {
        try await SandboxHarness.run { harness in
            let tiqav = harness.tiqav()
            _ = try await tiqav.random()
            var control = URLRequest(url: harness.sandbox.baseURL.appendingPathComponent("_sandbox/faults"))
            control.httpMethod = "POST"
            control.httpBody = Data(#"{"path": "/search.json", "responses": ["drop", 404]}"#.utf8)
            let session = URLSession(configuration: .ephemeral)
            defer { session.invalidateAndCancel() }
            let (_, response) = try await session.data(for: control)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)

            let dropped = await serviceError { try await tiqav.search("猫") }
            #expect(dropped?.kind == .transport)
            #expect(try await tiqav.search("猫").isEmpty)  // the scripted 404: Tiqav's "nothing found"
            #expect(harness.sandbox.scriptedFaults().isEmpty)
            #expect(try await tiqav.search("猫").count > 0)
        }
    }

    @Test(.timeLimit(.minutes(5))) func aScriptedBaaSCreateFailureStoresNothingAndTheLoaderQuerySeesCreations() async throws {
        try await SandboxHarness.run { harness in
            let baas = harness.baas()
            let path = "/1/\(harness.sandbox.configuration.baasTenant)/objects/todos"
            try harness.sandbox.script(path: path, method: "POST", [.status(503), .status(429)])
            let unavailable = await serviceError { try await baas.create(bucket: "todos", fields: ["description": .string("a")]) }
            #expect(unavailable?.status == 503)
            let limited = await serviceError { try await baas.create(bucket: "todos", fields: ["description": .string("a")]) }
            #expect(limited?.kind == .rateLimited)
            #expect(try await baas.query(bucket: "todos").results.isEmpty)

            let created = try await baas.create(bucket: "todos", fields: ["description": .string("a")])
            let listed = try await baas.query(bucket: "todos", BaaSQuery(order: ["updatedAt"], includeCount: true))
            #expect(listed.results.map(\.id) == [created.id])
            #expect(listed.count == 1)
            #expect(harness.sandbox.objects(inBucket: "todos").map(\.id) == [created.id])
        }
    }

    @Test(.timeLimit(.minutes(5))) func grownTodosAreBaaSObjectsTheClientReads() async throws {
        try await SandboxHarness.run({ $0.todoInterval = 20 }) { harness in
            let baas = harness.baas()
            #expect(try await baas.query(bucket: "todos").results.isEmpty)
            harness.time.advance(by: 60)
            let todos = try await baas.query(bucket: "todos").results
            #expect(todos.count == 3)
            #expect(todos.first?.fields["done"] == .bool(false))
            #expect(todos.first?.updatedAt == harness.time.now.addingTimeInterval(-40))
        }
    }
}
