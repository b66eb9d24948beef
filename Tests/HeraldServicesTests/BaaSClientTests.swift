import Foundation
import HeraldSandbox
import HeraldServices
import Testing
import HeraldTestSupport

@Suite struct BaaSClientTests {
    @Test func createThenQueryDefaultsToUpdatedAtAscending() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.baas()
            let milk = try await client.create(bucket: "todos", fields: ["description": .string("牛乳を買う")])
            harness.time.advance(by: 1.5)
            let eggs = try await client.create(bucket: "todos", fields: ["description": .string("eggs"), "done": .bool(false)])
            #expect(milk.todoDescription == "牛乳を買う")
            #expect(milk.etag != nil)
            #expect(eggs.createdAt == harness.time.now)
            var result = try await client.query(bucket: "todos")
            #expect(result.results.map(\.id) == [milk.id, eggs.id])
            #expect(result.count == nil)

            harness.time.advance(by: 1)
            let updated = try await client.update(bucket: "todos", id: milk.id, fields: ["done": .bool(true)], etag: milk.etag)
            #expect(updated.todoDescription == "牛乳を買う")
            #expect(updated.fields["done"] == .bool(true))
            #expect(updated.etag != milk.etag)
            result = try await client.query(bucket: "todos")
            #expect(result.results.map(\.id) == [eggs.id, milk.id])
        }
    }

    @Test func queryHonoursWhereOrderSkipLimitAndCount() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.baas()
            for index in 0..<5 {
                _ = try await client.create(bucket: "items", fields: ["rank": .number(Double(index)), "even": .bool(index % 2 == 0)])
                harness.time.advance(by: 0.25)
            }
            let evens = try await client.query(bucket: "items", BaaSQuery(conditions: ["even": .bool(true)], order: ["-rank"], includeCount: true))
            #expect(evens.results.map { $0.fields["rank"] } == [.number(4), .number(2), .number(0)])
            #expect(evens.count == 3)
            let page = try await client.query(bucket: "items", BaaSQuery(order: ["rank"], skip: 1, limit: 2, includeCount: true))
            #expect(page.results.map { $0.fields["rank"] } == [.number(1), .number(2)])
            #expect(page.count == 5)
            let ranged = try await client.query(bucket: "items", BaaSQuery(conditions: ["rank": .object(["$gte": .number(3)])]))
            #expect(ranged.results.count == 2)
            #expect(try await client.query(bucket: "empty").results.isEmpty)
        }
    }

    @Test func staleEtagIs409AndDeleteRemoves() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.baas()
            let item = try await client.create(bucket: "todos", fields: ["description": .string("x")])
            _ = try await client.update(bucket: "todos", id: item.id, fields: ["description": .string("y")], etag: item.etag)
            let stale = await serviceError { try await client.update(bucket: "todos", id: item.id, fields: [:], etag: item.etag) }
            #expect(stale?.kind == .httpStatus)
            #expect(stale?.status == 409)
            #expect(stale?.bodyExcerpt?.contains("etag") == true)
            let staleDelete = await serviceError { try await client.delete(bucket: "todos", id: item.id, etag: item.etag) }
            #expect(staleDelete?.status == 409)
            try await client.delete(bucket: "todos", id: item.id)
            #expect(try await client.query(bucket: "todos").results.isEmpty)
            let missing = await serviceError { try await client.delete(bucket: "todos", id: item.id) }
            #expect(missing?.status == 404)
        }
    }

    @Test func fieldsOrConditionsWithoutAJSONFormAreInvalidRequestsNotSent() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.baas()
            let badQuery = await serviceError { try await client.query(bucket: "todos", BaaSQuery(conditions: ["rank": .number(.nan)])) }
            #expect(badQuery?.kind == .invalidRequest)
            let badCreate = await serviceError { try await client.create(bucket: "todos", fields: ["rank": .number(.infinity)]) }
            #expect(badCreate?.kind == .invalidRequest)
            #expect(harness.sandbox.requestsReceived == 0)
        }
    }

    @Test func wrongApplicationKeyIs401() async throws {
        try await SandboxHarness.run { harness in
            let error = await serviceError { try await harness.baas(applicationKey: "wrong").query(bucket: "todos") }
            #expect(error?.kind == .httpStatus)
            #expect(error?.status == 401)
        }
    }

    @Test func endpointWithAPIPathGetsATrailingSlash() async throws {
        try await SandboxHarness.run { harness in
            // A path prefix the sandbox does not serve shows the client joined it correctly.
            let configuration = BaaSConfiguration(
                endpoint: harness.sandbox.baseURL.appendingPathComponent("api"), tenantID: "t", applicationID: "a", applicationKey: "k")
            let error = await serviceError { try await BaaSClient(configuration: configuration, transport: harness.transport).query(bucket: "b") }
            #expect(error?.status == 404)
        }
    }
}
