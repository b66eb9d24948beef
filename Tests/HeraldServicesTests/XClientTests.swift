import Foundation
import HeraldSandbox
import HeraldServices
import HeraldTestSupport
import Testing
import HeraldTesting

/// X API v2 against the sandbox's emulation, over real HTTP.
@Suite struct XClientTests {
    @Test func createdPostAppearsInTheHomeTimelineAfterSinceID() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.x()
            let me = try await client.me()
            #expect(me.id == "1")
            #expect(me.username == "herald_sandbox")
            let first = try await client.homeTimeline(userID: me.id, XTimelineQuery(maxResults: 5))
            #expect(first.posts.count == 5)
            #expect(first.rateLimit?.remaining == 14)
            // Authors come from includes.users; dates are ISO 8601.
            let statuses = first.statuses(fallbackDate: .distantPast)
            #expect(statuses.allSatisfy { !$0.user.screenName.isEmpty && $0.createdAt != .distantPast })
            let newest = try #require(first.newestID)
            let text = "Hello from v2: 日本語 🎉 \"quotes\" & a\\backslash"
            let created = try await client.createPost(text: text)
            #expect(created.text == text)
            let after = try await client.homeTimeline(userID: me.id, XTimelineQuery(sinceID: newest))
            #expect(after.posts.map(\.id) == [created.id])
            #expect(after.posts.first?.text == text)
            #expect(after.statuses(fallbackDate: .distantPast).first?.user.screenName == "herald_sandbox")
            #expect(harness.sandbox.posts().map(\.text) == [text])
            // A reply names the post it answers.
            let reply = try await client.createPost(text: "a reply", inReplyTo: created.id)
            let replies = try await client.homeTimeline(userID: me.id, XTimelineQuery(sinceID: created.id))
            #expect(replies.posts.first?.id == reply.id)
            #expect(replies.posts.first?.inReplyToID == created.id)
        }
    }

    @Test func anOAuth2UserTokenAuthorizesAndAWrongOneIs401() async throws {
        try await SandboxHarness.run { harness in
            let token = harness.sandbox.configuration.oauth2UserToken
            let me = try await harness.x(bearer: token).me()
            #expect(me.id == "1")
            let error = await serviceError { try await harness.x(bearer: "revoked-token").me() }
            #expect(error?.kind == .httpStatus)
            #expect(error?.status == 401)
            #expect(error?.message.contains("revoked") == true)
            #expect(error.map { "\($0)" }?.contains("revoked-token") == false)
        }
    }

    @Test func duplicateContentIs403WithTheDuplicateCode() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.x()
            _ = try await client.createPost(text: "only once")
            let error = await serviceError { try await client.createPost(text: "only once") }
            #expect(error?.kind == .httpStatus)
            #expect(error?.status == 403)
            #expect(error?.hasAPIError(code: 187) == true)
            #expect(error?.message.contains("duplicate content") == true)
            #expect(harness.sandbox.posts().count == 1)
        }
    }

    @Test func pagesFollowNextTokensWithoutRepeatsOrGaps() async throws {
        try await SandboxHarness.run({ $0.initialStatusCount = 12 }) { harness in
            let client = harness.x()
            var token: String?
            var ids: [String] = []
            repeat {
                let page = try await client.homeTimeline(userID: "1", XTimelineQuery(maxResults: 5, paginationToken: token))
                ids += page.posts.map(\.id)
                token = page.nextToken
            } while token != nil
            #expect(ids.count == 12)
            #expect(Set(ids).count == 12)
            #expect(ids == ids.sorted { ($0.count, $0) > ($1.count, $1) })
            // A bad token is a 400 in the invalid-request shape.
            let error = await serviceError { try await client.homeTimeline(userID: "1", XTimelineQuery(paginationToken: "nope")) }
            #expect(error?.status == 400)
            #expect(error?.message.contains("Invalid Request") == true)
        }
    }

    @Test func userPostsAndRecentSearch() async throws {
        try await SandboxHarness.run({ $0.initialStatusCount = 20 }) { harness in
            let client = harness.x()
            let sakura = try await client.user(username: "sakura_dev")
            #expect(sakura.id == "9007199254740993")
            let posts = try await client.userPosts(userID: sakura.id, XTimelineQuery(maxResults: 5))
            #expect(!posts.posts.isEmpty)
            #expect(posts.posts.allSatisfy { $0.authorID == sakura.id })
            let found = try await client.searchRecent("ラーメン", XTimelineQuery(maxResults: 10))
            #expect(!found.posts.isEmpty)
            #expect(found.posts.allSatisfy { $0.text.contains("ラーメン") })
            let fromSakura = try await client.searchRecent("from:sakura_dev")
            #expect(fromSakura.posts.allSatisfy { $0.authorID == sakura.id })
            // max_results below the endpoint's range is refused, with the parameter named.
            let error = await serviceError { try await client.userPosts(userID: sakura.id, XTimelineQuery(maxResults: 1)) }
            #expect(error?.status == 400)
            #expect(error?.message.contains("max_results") == true)
        }
    }

    @Test func aTwoHundredWithOnlyErrorsIsADecodingError() async throws {
        try await SandboxHarness.run { harness in
            let error = await serviceError { try await harness.x().user(username: "nobody_here") }
            #expect(error?.kind == .decoding)
            #expect(error?.message.contains("Could not find user") == true)
            let posts = await serviceError { try await harness.x().userPosts(userID: "42") }
            #expect(posts?.kind == .decoding)
        }
    }

    @Test func anEmptyPageIsEmptyNotAnError() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.x()
            let top = try await client.homeTimeline(userID: "1", XTimelineQuery(maxResults: 1))
            let newest = try #require(top.newestID)
            let empty = try await client.homeTimeline(userID: "1", XTimelineQuery(sinceID: newest))
            #expect(empty.posts.isEmpty)
            #expect(empty.resultCount == 0)
            #expect(empty.nextToken == nil)
        }
    }

    @Test func homeTimelineRateLimitIs429WithTheReset() async throws {
        try await SandboxHarness.run({ $0.homeTimelineLimit = 1 }) { harness in
            let client = harness.x()
            _ = try await client.homeTimeline(userID: "1")
            let error = await serviceError { try await client.homeTimeline(userID: "1") }
            #expect(error?.kind == .rateLimited)
            #expect(error?.rateLimit?.remaining == 0)
            #expect(error?.rateLimit?.reset == harness.time.now.addingTimeInterval(900))
        }
    }

    @Test func scriptedFaultsOnV2PathsAnswerProblems() async throws {
        try await SandboxHarness.run { harness in
            try harness.sandbox.script(path: "/2/tweets", [.status(503), .status(429)])
            let client = harness.x()
            let unavailable = await serviceError { try await client.createPost(text: "x") }
            #expect(unavailable?.kind == .httpStatus)
            #expect(unavailable?.status == 503)
            #expect(unavailable?.bodyExcerpt?.contains("\"title\"") == true)
            let limited = await serviceError { try await client.createPost(text: "x") }
            #expect(limited?.kind == .rateLimited)
            #expect(limited?.rateLimit?.reset != nil)
            #expect(harness.sandbox.posts().isEmpty)
            _ = try await client.createPost(text: "x")
            #expect(harness.sandbox.posts().count == 1)
        }
    }

    @Test func videoUploadGoesThroughTheProcessingStatesAndAttaches() async throws {
        try await SandboxHarness.run({ $0.processingPolls = 3; $0.processingCheckAfterSeconds = 2 }) { harness in
            let client = harness.x(segmentSize: 1000)
            let video = MP4Fixture.make()
            let recorder = Recording<UploadProgress>()
            let media = try await client.uploadMedia(video, mediaType: "video/mp4", category: "tweet_video") { recorder.append($0) }
            #expect(media.statusPolls == 3)
            let phases = recorder.values.map(\.phase)
            #expect(phases.first == .initialized)
            #expect(phases.contains(.uploading))
            #expect(phases.contains(.processing))
            #expect(phases.last == .completed)
            #expect(recorder.values.last?.bytesSent == video.count)
            #expect(harness.clock.sleeps.allSatisfy { $0 == .seconds(2) })
            let post = try await client.createPost(text: "with video", mediaIDs: [media.mediaID])
            #expect(harness.sandbox.posts().last?.mediaIDs == [media.mediaID])
            #expect(!post.id.isEmpty)
        }
    }

    @Test func failedProcessingIsProcessingFailed() async throws {
        try await SandboxHarness.run({ $0.processingFails = true }) { harness in
            let error = await serviceError { try await harness.x().uploadMedia(MP4Fixture.make(), mediaType: "video/mp4", category: "tweet_video") }
            #expect(error?.kind == .processingFailed)
            #expect(error?.message == "Unsupported video format")
        }
    }

    @Test func mediaThatNeverFinishesProcessingIsGivenUpAfterTheBound() async throws {
        try await SandboxHarness.run({ $0.processingPolls = 1_000_000_000 }) { harness in
            let client = harness.x(maxStatusPolls: 3)
            let error = await serviceError { try await client.uploadMedia(MP4Fixture.make(), mediaType: "video/mp4", category: "tweet_video") }
            #expect(error?.kind == .processingFailed)
            #expect(error?.message.contains("after 3 status polls") == true)
            #expect(harness.clock.sleeps.count == 3)
        }
    }

    @Test func aVideoOutsideTheLimitsSendsNothing() async throws {
        try await SandboxHarness.run { harness in
            let before = harness.sandbox.requestsReceived
            let error = await serviceError { try await harness.x().uploadMedia(Data("not a video".utf8), mediaType: "video/mp4") }
            #expect(error?.kind == .invalidRequest)
            #expect(harness.sandbox.requestsReceived == before)
        }
    }

    @Test func authorizationNeverShowsItsSecrets() {
        let bearer = XAuthorization.bearer("very-secret-token")
        let oauth = XAuthorization.oauth1(OAuthCredentials(consumerKey: "ck", consumerSecret: "cs-secret", token: "1-t", tokenSecret: "ts-secret"))
        for value in [bearer, oauth] {
            var dumped = ""
            dump(value, to: &dumped)
            for text in ["\(value)", String(reflecting: value), dumped] {
                #expect(!text.contains("very-secret-token"))
                #expect(!text.contains("cs-secret"))
                #expect(!text.contains("ts-secret"))
            }
        }
    }
}
