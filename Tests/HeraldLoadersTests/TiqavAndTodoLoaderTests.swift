import Foundation
import Herald
import HeraldLoaders
import HeraldSandbox
import HeraldServices
import Testing

@Suite struct TiqavAndTodoLoaderTests {
    @Test func tiqavMarksOnlyUnseenImagesAsNew() async throws {
        try await LoaderHarness.run { harness in
            let loader = try TiqavLoader(id: "images", client: harness.tiqav(), bus: harness.bus, stateStore: harness.store)
            _ = await loader.load()
            _ = await loader.load()
            let events = harness.recorder.events(TiqavLoaded.self)
            #expect(events.count == 2)
            #expect(events[0].newImages == events[0].images)
            let firstIDs = Set(events[0].images.map(\.id))
            #expect(events[1].newImages.allSatisfy { !firstIDs.contains($0.id) })
            #expect(events[0].imageURLs.allSatisfy { $0.hasPrefix(harness.sandbox.imageBaseURL.absoluteString) })

            let restarted = try TiqavLoader(id: "images", client: harness.tiqav(), bus: harness.bus, stateStore: harness.store)
            _ = await restarted.load()
            let seen = Set(events.flatMap { $0.images.map(\.id) })
            #expect(harness.recorder.events(TiqavLoaded.self)[2].newImages.allSatisfy { !seen.contains($0.id) })
        }
    }

    @Test func tiqavSearchWithNoMatchIsAnEmptySuccess() async throws {
        try await LoaderHarness.run { harness in
            let loader = try TiqavLoader(id: "search", client: harness.tiqav(), request: .search("zzzz-no-match"), bus: harness.bus)
            #expect(await loader.load() == .finished(items: 0, new: 0))
        }
    }

    @Test func tiqavTruncatedBodiesFail() async throws {
        try await LoaderHarness.run({ $0.faults.truncateRate = 1 }) { harness in
            let loader = try TiqavLoader(id: "images", client: harness.tiqav(), bus: harness.bus)
            #expect(await loader.load().succeeded == false)
            #expect(harness.recorder.topics == ["loader.images.failed"])
        }
    }

    @Test func todosAreSortedByUpdateAndReportAdditionsAndRemovals() async throws {
        try await LoaderHarness.run { harness in
            let baas = harness.baas()
            let loader = try TodoLoader(id: "todos", client: baas, bucket: "todos", bus: harness.bus, stateStore: harness.store)
            #expect(await loader.load() == .finished(items: 0, new: 0))
            let milk = try await baas.create(bucket: "todos", fields: ["description": .string("Buy milk")])
            harness.time.advance(by: 1)
            let docs = try await baas.create(bucket: "todos", fields: ["description": .string("Write docs")])
            #expect(await loader.load() == .finished(items: 2, new: 2))
            harness.time.advance(by: 1)
            let touched = try await baas.update(bucket: "todos", id: milk.id, fields: ["description": .string("Buy oat milk")])
            try await baas.delete(bucket: "todos", id: docs.id)
            #expect(await loader.load() == .finished(items: 1, new: 0))

            let events = harness.recorder.events(TodosLoaded.self)
            #expect(events[1].todos.map(\.todoDescription) == ["Buy milk", "Write docs"])
            #expect(events[2].todos.map(\.id) == [touched.id])
            #expect(events[2].removedIDs == [docs.id])
        }
    }

    @Test func todoSortingIsByUpdatedAtWithStableTies() {
        let early = Date(timeIntervalSince1970: 1), late = Date(timeIntervalSince1970: 2)
        let objects = [BaaSObject(id: "c", updatedAt: late), BaaSObject(id: "a", updatedAt: early),
                       BaaSObject(id: "n"), BaaSObject(id: "b", updatedAt: early)]
        #expect(TodoLoader.sortedByUpdate(objects).map(\.id) == ["n", "a", "b", "c"])
    }

    @Test func wrongApplicationKeyIsAnHTTPFailure() async throws {
        try await LoaderHarness.run { harness in
            let configuration = harness.sandbox.configuration
            let client = BaaSClient(configuration: BaaSConfiguration(
                endpoint: harness.sandbox.baseURL, tenantID: configuration.baasTenant,
                applicationID: configuration.baasApplicationID, applicationKey: "wrong"), transport: harness.transport)
            let loader = try TodoLoader(id: "todos", client: client, bucket: "todos", bus: harness.bus)
            guard case .failed(let error) = await loader.load() else {
                Issue.record("expected a 401")
                return
            }
            #expect(error.status == 401)
            let json = String(decoding: try JSONEncoder().encode(harness.recorder.events(LoadFailed.self)), as: UTF8.self)
            #expect(!json.contains(configuration.baasApplicationKey))
        }
    }
}
