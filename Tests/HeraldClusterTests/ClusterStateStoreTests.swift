import HeraldCluster
import HeraldLoaders
import HeraldSync
import HeraldTestSupport
import Testing
import HeraldTesting

@Suite struct ClusterStateStoreTests {
    @Test func aNewHolderReadsWhatTheLastHolderSaved() async throws {
        let clock = ManualClock()
        let bucket = InMemoryKeyValue(name: "states", clock: clock)
        let a = ClusterStateStore(bucket: bucket, holds: { _ in true })
        #expect(try await a.fetch("home") == .missing)
        try await a.save(LoaderState(sinceID: "42"), for: "home")
        let b = ClusterStateStore(bucket: bucket, holds: { _ in true })
        try await b.fetch("home")
        #expect(await b.load("home") == .loaded(LoaderState(sinceID: "42")))
    }

    @Test func aSaveWithoutTheLeaseIsRefusedAndWritesNothing() async throws {
        let clock = ManualClock()
        let bucket = InMemoryKeyValue(name: "states", clock: clock)
        let store = ClusterStateStore(bucket: bucket, holds: { _ in false })
        await #expect(throws: LoaderStateStoreError.self) { try await store.save(LoaderState(sinceID: "1"), for: "home") }
        #expect(bucket.snapshot.isEmpty)
    }

    @Test func anOldHoldersLateSaveDoesNotOverwriteTheNewHolders() async throws {
        let clock = ManualClock()
        let bucket = InMemoryKeyValue(name: "states", clock: clock)
        let old = ClusterStateStore(bucket: bucket, holds: { _ in true })
        try await old.fetch("todos")
        try await old.save(LoaderState(seen: ["x"]), for: "todos")
        let new = ClusterStateStore(bucket: bucket, holds: { _ in true })
        try await new.fetch("todos")
        try await new.save(LoaderState(seen: ["x", "y"]), for: "todos")
        do {
            try await old.save(LoaderState(seen: ["x", "z"]), for: "todos")
            Issue.record("the old holder's save was accepted")
        } catch {
            #expect(error.reason == "another node saved the state since this one read it")
        }
        let check = ClusterStateStore(bucket: bucket, holds: { _ in true })
        #expect(try await check.fetch("todos") == .loaded(LoaderState(seen: ["x", "y"])))
    }

    @Test func aSaveWaitsForTheIntentsBegunBeforeItAndIsRefusedWhileOneIsHeld() async throws {
        let clock = ManualClock()
        let bucket = InMemoryKeyValue(name: "states", clock: clock)
        let ledger = IntentLedger()
        let store = ClusterStateStore(bucket: bucket, ledger: ledger, holds: { _ in true })
        try await store.fetch("todos")
        let first = ledger.begin(), second = ledger.begin()
        let saved = SyncLock(false)
        let saving = Task {
            try await store.save(LoaderState(seen: ["a"]), for: "todos")
            saved.withLock { $0 = true }
        }
        ledger.stored(first)
        #expect(!saved.withLock { $0 })
        ledger.held(second)
        await #expect(throws: LoaderStateStoreError.self) { try await saving.value }
        #expect(bucket.snapshot.isEmpty)
        ledger.stored(second)
        try await store.save(LoaderState(seen: ["a"]), for: "todos")
        #expect(bucket.snapshot.count == 1)
    }
}
