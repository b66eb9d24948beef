import Foundation
import Herald
import HeraldIO
import HeraldLoaders
import HeraldSandbox
import HeraldServices
import Testing

@Suite struct TimelineLoaderTests {
    @Test func eachLoadPublishesExactlyOneFinishedEventWithTheNewStatuses() async throws {
        try await LoaderHarness.run { harness in
            let loader = try TimelineLoader(id: "home", client: harness.twitter(), request: .init(count: 10), bus: harness.bus)
            let first = await loader.load()
            let second = await loader.load()

            #expect(first == .finished(items: 10, new: 10))
            // The second request asks only for what is newer than the first page's newest.
            #expect(second == .finished(items: 0, new: 0))
            #expect(harness.recorder.topics == ["loader.home.finished", "loader.home.finished"])
            let events = harness.recorder.events(TimelineLoaded.self)
            #expect(events[0].newStatuses == events[0].statuses)
            #expect(events[1].newStatuses.isEmpty)
            #expect(harness.transport.queryValues("since_id") == [nil, events[0].statuses.first?.id])
            #expect(harness.recorder.envelopes.allSatisfy { $0.sender == loader.sender })
        }
    }

    @Test func userTimelineReadsXML() async throws {
        try await LoaderHarness.run { harness in
            let request = TimelineLoader.Request(timeline: .user(screenName: "itmedia"), count: 5, format: .xml)
            let loader = try TimelineLoader(id: "itmedia", client: harness.twitter(), request: request, bus: harness.bus)
            guard case .finished(let items, _) = await loader.load() else {
                Issue.record("expected a finished load")
                return
            }
            #expect(items > 0)
            #expect(harness.recorder.events(TimelineLoaded.self).first?.statuses.allSatisfy { $0.user.screenName == "itmedia" } == true)
        }
    }

    @Test func aRestartDoesNotReannounceSeenStatuses() async throws {
        try await LoaderHarness.run { harness in
            let first = try TimelineLoader(id: "home", client: harness.twitter(), bus: harness.bus, stateStore: harness.store)
            #expect(await first.load() == .finished(items: 20, new: 20))
            let restarted = try TimelineLoader(id: "home", client: harness.twitter(), bus: harness.bus, stateStore: harness.store)
            #expect(await restarted.load() == .finished(items: 0, new: 0))
            #expect(harness.transport.queryValues("since_id").last == harness.recorder.events(TimelineLoaded.self).first?.statuses.first?.id)

            let file = try #require(harness.store.fileURL(for: "home"))
            let state = try JSONDecoder().decode(LoaderState.self, from: Data(contentsOf: file))
            #expect(state.sinceID == harness.recorder.events(TimelineLoaded.self).first?.statuses.first?.id)
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: harness.stateDirectory.path)
            #expect(leftovers == ["home.json"])
        }
    }

    /// Review finding: a load whose announcement the bus refused (it was shutting down) still
    /// saved its state, so the items it fetched were marked seen with nobody told of them.
    @Test func aRefusedAnnouncementSavesNoState() async throws {
        try await LoaderHarness.run { harness in
            let loader = try TimelineLoader(id: "home", client: harness.twitter(), bus: harness.bus, stateStore: harness.store)
            _ = await harness.bus.shutdown(timeout: .seconds(3_600))
            _ = await loader.load()
            let file = try #require(harness.store.fileURL(for: "home"))
            #expect(!FileManager.default.fileExists(atPath: file.path), "the items were never announced")
        }
    }

    @Test func aCorruptStateFileIsReportedAndSetAside() async throws {
        try await LoaderHarness.run { harness in
            try FileManager.default.createDirectory(at: harness.stateDirectory, withIntermediateDirectories: true)
            let file = try #require(harness.store.fileURL(for: "home"))
            try Data("{not json".utf8).write(to: file)
            let loader = try TimelineLoader(id: "home", client: harness.twitter(), bus: harness.bus, stateStore: harness.store)

            #expect(await loader.load() == .finished(items: 20, new: 20))
            #expect(harness.recorder.topics == ["loader.home.state.corrupt", "loader.home.finished"])
            let aside = try #require(harness.recorder.events(LoaderStateSetAside.self).first)
            let moved = try #require(aside.movedTo)
            #expect(FileManager.default.fileExists(atPath: moved))
            #expect(aside.reason.hasPrefix("not JSON"))
            #expect(FileManager.default.fileExists(atPath: file.path))
        }
    }

    @Test func aStateFileThatCannotBeReadIsReportedNotSilentlyReplaced() async throws {
        try await LoaderHarness.run { harness in
            let file = try #require(harness.store.fileURL(for: "home"))
            // A directory where the state file should be: present, but not readable as a file.
            try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
            let loader = try TimelineLoader(id: "home", client: harness.twitter(), bus: harness.bus, stateStore: harness.store)

            #expect(await loader.load() == .finished(items: 20, new: 20))
            #expect(harness.recorder.topics == ["loader.home.state.corrupt", "loader.home.finished"])
            let aside = try #require(harness.recorder.events(LoaderStateSetAside.self).first)
            #expect(aside.reason == "it is a directory")
            #expect(aside.movedTo != nil)
        }
    }

    @Test func anUnwritableStateDirectoryIsReportedOnceAndLoadsGoOn() async throws {
        try await LoaderHarness.run { harness in
            try FileManager.default.createDirectory(at: harness.stateDirectory, withIntermediateDirectories: true)
            let blocker = harness.stateDirectory.appendingPathComponent("not-a-directory")
            try Data("x".utf8).write(to: blocker)
            let store = LoaderStateStore(directory: blocker.appendingPathComponent("state"), io: BlockingIOThread(name: "test.state-io"))
            let loader = try TimelineLoader(id: "home", client: harness.twitter(), bus: harness.bus, stateStore: store)
            #expect(await loader.load() == .finished(items: 20, new: 20))
            #expect(await loader.load() == .finished(items: 0, new: 0))
            let unwritable = try #require(harness.recorder.events(LoaderStateUnwritable.self).first)
            #expect(unwritable.reason.contains(blocker.path), "the reason says where: \(unwritable.reason)")
            #expect(unwritable.reason.contains("Not a directory"), "and why, in words: \(unwritable.reason)")
            #expect(!unwritable.reason.contains("NSCocoaErrorDomain"))
            // The finished event goes out before the state is saved (so inline subscribers such
            // as the post scheduler record new items first); the failed save follows it.
            #expect(harness.recorder.topics == ["loader.home.finished", "loader.home.state.unwritable", "loader.home.finished"])
        }
    }

    @Test func concurrentLoadsJoinTheRunningRequest() async throws {
        try await LoaderHarness.run { harness in
            let loader = try TimelineLoader(id: "home", client: harness.twitter(), bus: harness.bus)
            let gate = harness.transport.holdResponses()
            let before = harness.sandbox.requestsReceived
            let first = Task { await loader.load() }
            // The service has the request; its response waits at the gate, so the load is in flight.
            await harness.sandbox.waitForRequests(before + 1)
            let (started, starting) = AsyncStream<Void>.makeStream()
            let joiners = (0..<2).map { _ in
                Task {
                    starting.yield()
                    return await loader.load()
                }
            }
            for await _ in started.prefix(joiners.count) {}
            gate.open()
            var outcomes = [await first.value]
            for joiner in joiners { outcomes.append(await joiner.value) }
            #expect(outcomes.allSatisfy { $0 == .finished(items: 20, new: 20) })
            #expect(harness.sandbox.requestsReceived - before == 1)
            #expect(harness.recorder.topics == ["loader.home.finished"])
        }
    }

    @Test func serverErrorsBecomeOneFailedEvent() async throws {
        try await LoaderHarness.run({ $0.faults.serverErrorRate = 1 }) { harness in
            let loader = try TimelineLoader(id: "home", client: harness.twitter(), bus: harness.bus)
            guard case .failed(let error) = await loader.load() else {
                Issue.record("expected a failure")
                return
            }
            #expect(error.kind == "httpStatus")
            #expect([500, 503].contains(error.status ?? 0))
            #expect(harness.recorder.topics == ["loader.home.failed"])
            #expect(harness.recorder.events(LoadFailed.self).first?.error == error)
        }
    }

    @Test func malformedBodiesAreDecodingFailures() async throws {
        try await LoaderHarness.run({ $0.faults.malformRate = 1 }) { harness in
            let loader = try TimelineLoader(id: "home", client: harness.twitter(), bus: harness.bus)
            let outcome = await loader.load()
            guard case .failed(let error) = outcome else {
                Issue.record("expected a failure, got \(outcome)")
                return
            }
            #expect(error.kind == "decoding")
        }
    }

    @Test func timeoutsAreTimeoutFailures() async throws {
        // An answer that never comes in time, whatever the load on the machine: only the timeout can end it.
        try await LoaderHarness.run({ $0.faults.latency = .seconds(3600) }) { harness in
            let loader = try TimelineLoader(id: "home", client: harness.twitter(timeout: .milliseconds(200)), bus: harness.bus)
            guard case .failed(let error) = await loader.load() else {
                Issue.record("expected a failure")
                return
            }
            #expect(error.kind == "timeout")
            #expect(harness.recorder.topics == ["loader.home.failed"])
        }
    }

    @Test func rateLimitsCarryTheResetTime() async throws {
        try await LoaderHarness.run({ $0.homeTimelineLimit = 1 }) { harness in
            let loader = try TimelineLoader(id: "home", client: harness.twitter(), bus: harness.bus)
            #expect(await loader.load().succeeded)
            guard case .failed(let error) = await loader.load() else {
                Issue.record("expected a rate-limit failure")
                return
            }
            #expect(error.isRateLimited)
            #expect(error.codes == [88])
            let reset = try #require(error.retryAt)
            #expect(reset > harness.time.now)
        }
    }

    @Test func failedEventsSerialiseWithoutSecrets() async throws {
        try await LoaderHarness.run { harness in
            let loader = try TimelineLoader(id: "missing", client: harness.twitter(),
                                            request: .init(timeline: .user(screenName: "nobody_here")), bus: harness.bus)
            guard case .failed(let error) = await loader.load() else {
                Issue.record("expected a 404")
                return
            }
            #expect(error.status == 404 && error.codes == [34])
            let json = String(decoding: try JSONEncoder().encode(harness.recorder.events(LoadFailed.self)), as: UTF8.self)
            let keys = harness.sandbox.configuration.credentials
            for secret in [keys.consumerSecret, keys.tokenSecret, keys.token, "oauth_signature"] {
                #expect(!json.contains(secret))
            }
            let decoded = try JSONDecoder().decode([LoadFailed].self, from: Data(json.utf8))
            #expect(decoded.first?.error == error)
        }
    }

    @Test func droppedConnectionsAreTransportFailures() async throws {
        try await LoaderHarness.run({ $0.faults.dropRate = 1 }) { harness in
            let loader = try TimelineLoader(id: "home", client: harness.twitter(), bus: harness.bus)
            guard case .failed(let error) = await loader.load() else {
                Issue.record("expected a failure")
                return
            }
            #expect(["transport", "timeout"].contains(error.kind))
            #expect(harness.recorder.topics == ["loader.home.failed"])
        }
    }

    @Test func cancellingTheCallerCancelsTheRequestWithOneEvent() async throws {
        // Neither the answer nor the client's timeout can come before the cancellation.
        try await LoaderHarness.run({ $0.faults.latency = .seconds(3600) }, timeout: .seconds(3600)) { harness in
            let loader = try TimelineLoader(id: "home", client: harness.twitter(), bus: harness.bus)
            let before = harness.sandbox.requestsReceived
            let call = Task { await loader.load() }
            // Wait until the request reached the sandbox (it is held there by the latency), then cancel.
            await harness.sandbox.waitForRequests(before + 1)
            call.cancel()
            let outcome = await call.value
            #expect(outcome == .failed(LoadError(kind: "cancelled", message: "cancelled")))
            #expect(harness.recorder.topics == ["loader.home.failed"])
        }
    }

    @Test func theTimelineGrowsOnlyWhenTheTestAdvancesTime() async throws {
        // A status every millisecond of the sandbox's time: on the wall clock every load would see new ones.
        try await LoaderHarness.run({ $0.statusInterval = 0.001 }) { harness in
            let loader = try TimelineLoader(id: "home", client: harness.twitter(), bus: harness.bus)
            #expect(await loader.load() == .finished(items: 20, new: 20))
            #expect(await loader.load() == .finished(items: 0, new: 0))
            harness.time.advance(by: 0.003)
            #expect(await loader.load() == .finished(items: 3, new: 3))
        }
    }

    @Test func aMarkerOlderThanTheServersTimelineDoesNotSuppressNewStatuses() async throws {
        try await LoaderHarness.run { harness in
            // A marker from long ago: the service no longer holds anything that old.
            try harness.writeState(#"{"version":1,"sinceID":"1000","seen":[]}"#, for: "home")
            let loader = try TimelineLoader(id: "home", client: harness.twitter(), bus: harness.bus, stateStore: harness.store)
            #expect(await loader.load() == .finished(items: 20, new: 20))
            harness.time.advance(by: 10)
            #expect(await loader.load() == .finished(items: 2, new: 2))
            let pages = harness.recorder.events(TimelineLoaded.self)
            #expect(harness.transport.queryValues("since_id") == ["1000", pages[0].statuses.first?.id])
            #expect(harness.recorder.topics == ["loader.home.finished", "loader.home.finished"])
        }
    }

    @Test(arguments: [
        (#"{"version":1,"sinceID":"12345678901234567890123456789012","seen":[]}"#, "sinceID"),
        (#"{"version":1,"sinceID":"abc","seen":[]}"#, "sinceID"),
        (#"{"version":1,"sinceID":"-5","seen":[]}"#, "sinceID"),
        (#"{"version":1,"sinceID":"9223372036854775808","seen":[]}"#, "sinceID"),
        (#"{"version":99,"sinceID":"1050118621198921728","seen":[]}"#, "version 99"),
        (#"{"version":1,"seen":[""]}"#, "seen"),
    ])
    func anInvalidStateIsSetAsideAndReportedNeverTrusted(state: String, problem: String) async throws {
        try await LoaderHarness.run { harness in
            try harness.writeState(state, for: "home")
            let file = try #require(harness.store.fileURL(for: "home"))
            let loader = try TimelineLoader(id: "home", client: harness.twitter(), bus: harness.bus, stateStore: harness.store)

            #expect(await loader.load() == .finished(items: 20, new: 20))
            #expect(harness.recorder.topics == ["loader.home.state.corrupt", "loader.home.finished"])
            let aside = try #require(harness.recorder.events(LoaderStateSetAside.self).first)
            #expect(aside.path == file.path)
            #expect(aside.reason.contains(problem), "\(aside.reason)")
            let moved = try #require(aside.movedTo)
            #expect(try String(contentsOfFile: moved, encoding: .utf8) == state, "the bad state is kept aside as it was")
            #expect(harness.transport.queryValues("since_id") == [nil])
            let written = try JSONDecoder().decode(LoaderState.self, from: Data(contentsOf: file))
            #expect(written.version == LoaderState.currentVersion)
            #expect(written.sinceID == harness.recorder.events(TimelineLoaded.self).first?.statuses.first?.id)
        }
    }

    @Test func aValidStateIsTrusted() async throws {
        try await LoaderHarness.run { harness in
            try harness.writeState(#"{"version":1,"sinceID":"9223372036854775807","seen":[]}"#, for: "home")
            let loader = try TimelineLoader(id: "home", client: harness.twitter(), bus: harness.bus, stateStore: harness.store)
            #expect(await loader.load() == .finished(items: 0, new: 0))
            #expect(harness.recorder.topics == ["loader.home.finished"])
            #expect(harness.transport.queryValues("since_id") == ["9223372036854775807"])
        }
    }

    @Test func invalidIDsAreRefused() async throws {
        try await LoaderHarness.run { harness -> Void in
            #expect(throws: LoaderSetupError.invalidID("a.b")) {
                try TimelineLoader(id: "a.b", client: harness.twitter(), bus: harness.bus)
            }
        }
    }
}
