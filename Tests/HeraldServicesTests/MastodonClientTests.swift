import Foundation
import HeraldSandbox
import HeraldServices
import Testing
import HeraldTestSupport
import HeraldTesting

@Suite struct MastodonClientTests {
    @Test func aTimelinePageComesNewestFirstWithLinkPagesAndPlainText() async throws {
        try await SandboxHarness.run { harness in
            let page = try await harness.mastodon().timeline(.home, MastodonTimelineQuery(limit: 5))
            #expect(page.statuses.count == 5)
            let ids = page.statuses.map(\.id)
            #expect(ids == ids.sorted { MastodonID.isNewer($0, than: $1) })
            #expect(page.previous?.minID == ids.first)
            #expect(page.next?.maxID == ids.last)
            #expect(page.rateLimit?.limit == 300)
            #expect(page.rateLimit?.remaining == 299)
            #expect(page.statuses.allSatisfy { $0.content.hasPrefix("<p>") && !$0.text.contains("<") && $0.text.contains("#herald") })
            let older = try await harness.mastodon().timeline(.home, MastodonTimelineQuery(limit: 5, maxID: page.next?.maxID))
            #expect(older.statuses.allSatisfy { MastodonID.isNewer(ids.last ?? "", than: $0.id) })
        }
    }

    @Test func minIDPagesForwardAndSinceIDGivesTheNewest() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.mastodon()
            let first = try await client.timeline(.home, MastodonTimelineQuery(limit: 3))
            let cursor = try #require(first.statuses.first?.id)
            harness.time.advance(by: 5 * 10)  // ten more statuses, one every 5 s
            let forward = try await client.timeline(.home, MastodonTimelineQuery(limit: 3, minID: cursor))
            let newest = try await client.timeline(.home, MastodonTimelineQuery(limit: 3, sinceID: cursor))
            let all = try await client.timeline(.home, MastodonTimelineQuery(limit: 40, sinceID: cursor))
            #expect(all.statuses.count == 10)
            // min_id: the three immediately after the cursor (still newest first); since_id: the newest three.
            #expect(forward.statuses.map(\.id) == Array(all.statuses.suffix(3)).map(\.id))
            #expect(newest.statuses.map(\.id) == Array(all.statuses.prefix(3)).map(\.id))
        }
    }

    @Test func theOtherTimelinesReadTheirPaths() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.mastodon()
            let local = try await client.timeline(.local)
            #expect(!local.statuses.isEmpty && local.statuses.allSatisfy { !$0.account.acct.contains("@") })
            let federated = try await client.timeline(.federated)
            #expect(federated.statuses.contains { $0.account.acct.contains("@") })
            let tagged = try await client.timeline(.hashtag("sandbox"))
            #expect(!tagged.statuses.isEmpty && tagged.statuses.allSatisfy { $0.text.contains("#sandbox") })
            let account = try await client.timeline(.account("2"))
            #expect(!account.statuses.isEmpty && account.statuses.allSatisfy { $0.account.id == "2" })
            #expect(!(try await client.timeline(.list("1"))).statuses.isEmpty)
            let missing = await serviceError { try await client.timeline(.list("999")) }
            #expect(missing?.status == 404 && missing?.message == "Record not found")
        }
    }

    @Test func theSameIdempotencyKeyTwiceMakesOneStatusForAnHour() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.mastodon()
            let draft = MastodonStatusDraft(status: "Hello from Herald 🎉 & <friends>", visibility: "unlisted", spoilerText: "cw", language: "en")
            let first = try await client.postStatus(draft, idempotencyKey: "rule:item:loader.home:1")
            let again = try await client.postStatus(draft, idempotencyKey: "rule:item:loader.home:1")
            #expect(first.id == again.id)
            #expect(first.text == "Hello from Herald 🎉 & <friends>")
            #expect(first.visibility == "unlisted" && first.spoilerText == "cw" && first.language == "en")
            #expect(harness.sandbox.mastodonPosts().count == 1)
            harness.time.advance(by: 3601)  // the server forgets keys after an hour
            let later = try await client.postStatus(draft, idempotencyKey: "rule:item:loader.home:1")
            #expect(later.id != first.id)
            #expect(harness.sandbox.mastodonPosts().map(\.idempotencyKey) == ["rule:item:loader.home:1", "rule:item:loader.home:1"])
        }
    }

    @Test func aRefusedStatusCarriesTheServersErrorText() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.mastodon()
            let long = await serviceError { try await client.postStatus(MastodonStatusDraft(status: String(repeating: "a", count: 501))) }
            #expect(long?.kind == .httpStatus && long?.status == 422)
            #expect(long?.message == "Validation failed: Text character limit of 500 exceeded")
            let empty = await serviceError { try await client.postStatus(MastodonStatusDraft(status: "  ")) }
            #expect(empty?.kind == .invalidRequest)
            let visibility = await serviceError { try await client.postStatus(MastodonStatusDraft(status: "x", visibility: "friends")) }
            #expect(visibility?.kind == .invalidRequest)
            #expect(harness.sandbox.mastodonPosts().isEmpty)
        }
    }

    @Test func mediaIsPolledUntilProcessedThenAttached() async throws {
        try await SandboxHarness.run({ $0.mastodon.mediaPolls = 3 }) { harness in
            let client = harness.mastodon()
            let phases = Recording<UploadProgress.Phase>()
            let media = try await client.uploadMedia(Data(repeating: 7, count: 4096), mediaType: "video/mp4", fileName: "clip.mp4",
                                                     description: "A short clip") { phases.append($0.phase) }
            #expect(media.isProcessed && media.type == "video" && media.description == "A short clip")
            #expect(harness.clock.sleeps.count == 3)
            #expect(phases.values == [.uploading, .processing, .processing, .processing, .completed])
            let status = try await client.postStatus(MastodonStatusDraft(status: "with video", mediaIDs: [media.id]))
            #expect(status.mediaAttachments.map(\.id) == [media.id])
            #expect(harness.sandbox.mastodonPosts().first?.mediaDescriptions == ["A short clip"])
            let image = try await client.uploadMedia(Data([0x89, 0x50]), mediaType: "image/png")
            #expect(image.isProcessed && harness.clock.sleeps.count == 3)  // an image is processed at once (200)
        }
    }

    @Test func mediaThatNeverFinishesIsGivenUpAfterBoundedPolls() async throws {
        try await SandboxHarness.run({ $0.mastodon.mediaPolls = nil }) { harness in
            let error = await serviceError {
                try await harness.mastodon(maxMediaPolls: 4).uploadMedia(Data(repeating: 1, count: 64), mediaType: "video/mp4")
            }
            #expect(error?.kind == .processingFailed)
            #expect(error?.message.contains("still processing after 4 polls") == true)
            #expect(harness.clock.sleeps.count == 4)
        }
    }

    @Test func aRateLimitWhoseResetHasPassedWaitsAWindow() async throws {
        try await SandboxHarness.run { harness in
            try harness.sandbox.script(path: "/api/v1/timelines/home", [.status(429), .status(429)])
            let onTime = await serviceError { try await harness.mastodon().timeline(.home) }
            #expect(onTime?.kind == .rateLimited)
            #expect(onTime?.rateLimit?.reset == harness.time.now.addingTimeInterval(1))
            // The client's clock is ahead of the server's: the reset it names has passed.
            let ahead = harness.time.now.addingTimeInterval(120)
            let late = await serviceError { try await harness.mastodon(now: { ahead }).timeline(.home) }
            #expect(late?.kind == .rateLimited)
            #expect(late?.rateLimit?.reset == ahead.addingTimeInterval(MastodonClient.assumedRateLimitWindow))
        }
    }

    @Test func aRevokedTokenIsA401WithTheServersReason() async throws {
        try await SandboxHarness.run { harness in
            let error = await serviceError { try await harness.mastodon(token: "revoked-token").timeline(.home) }
            #expect(error?.kind == .httpStatus && error?.status == 401 && error?.message == "The access token is invalid")
            #expect(!"\(error.map { "\($0)" } ?? "")".contains("revoked-token"))
        }
    }

    @Test func aSuccessCarryingAnErrorBodyIsADecodingError() async throws {
        let client = MastodonClient(baseURL: URL(string: "http://127.0.0.1:9")!, token: "secret-token",
                                    transport: StubTransport(body: #"{"error":"Something went wrong"}"#))
        let error = await serviceError { try await client.timeline(.home) }
        #expect(error?.kind == .decoding)
        #expect(error?.message == "the server answered 200 with an error instead: Something went wrong")
        let wrongShape = MastodonClient(baseURL: URL(string: "http://127.0.0.1:9")!, token: "t",
                                        transport: StubTransport(body: #"[{"id":"1"}]"#))
        #expect(await serviceError { try await wrongShape.timeline(.home) }?.kind == .decoding)
    }

    @Test func theTokenIsNeverShown() {
        let client = MastodonClient(baseURL: URL(string: "https://mastodon.example")!, token: "very-secret-token", transport: StubTransport(body: "[]"))
        var dumped = ""
        dump(client, to: &dumped)
        #expect(!"\(client)".contains("very-secret-token"))
        #expect(!dumped.contains("very-secret-token"))
        #expect(!String(reflecting: client).contains("very-secret-token"))
    }

    @Test func anIdempotencyKeyIsAlwaysAValidHeader() {
        #expect(MastodonClient.headerSafeKey("rule:item:loader.home:42") == "rule:item:loader.home:42")
        let odd = MastodonClient.headerSafeKey("rule:item:loader.todos:a b\r\nInjected: 1")
        #expect(odd.hasPrefix("sha1-") && odd.count == 45)
    }
}
