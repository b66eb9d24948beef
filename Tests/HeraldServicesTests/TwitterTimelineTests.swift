import Foundation
import HeraldSandbox
import HeraldServices
import Testing
import HeraldTestSupport

@Suite struct TwitterTimelineTests {
    @Test func homeTimelineJSONIsNewestFirstWithRateLimitHeaders() async throws {
        try await SandboxHarness.run { harness in
            let page = try await harness.twitter().homeTimeline()
            #expect(page.statuses.count == 20)
            let ids = page.statuses.compactMap { UInt64($0.id) }
            #expect(ids == ids.sorted(by: >))
            #expect(ids.allSatisfy { $0 > 1 << 53 })
            #expect(page.rateLimit?.limit == 15)
            #expect(page.rateLimit?.remaining == 14)
            #expect(page.rateLimit?.reset == harness.time.now.addingTimeInterval(900))
        }
    }

    @Test func xmlTimelineCarriesTheSameStatusesAsJSON() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.twitter()
            let json = try await client.homeTimeline(TimelineQuery(count: 30))
            let xml = try await client.homeTimeline(TimelineQuery(count: 30), format: .xml)
            #expect(xml.statuses == json.statuses)
            #expect(json.statuses.contains { $0.text.contains("今日は") })
            #expect(json.statuses.contains { $0.text.contains("🎉") })
            #expect(xml.statuses.contains { $0.text.hasPrefix("Fish & chips <3") })
        }
    }

    @Test func timelineGrowsAndSinceIDSeesOnlyNewStatuses() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.twitter()
            let first = try await client.homeTimeline()
            let newest = try #require(first.newestID)
            let unchanged = try await client.homeTimeline(TimelineQuery(sinceID: newest))
            #expect(unchanged.statuses.isEmpty)
            harness.time.advance(by: 12)
            let later = try await client.homeTimeline(TimelineQuery(sinceID: newest))
            #expect(later.statuses.count == 2)
            #expect(later.statuses.allSatisfy { UInt64($0.id) ?? 0 > UInt64(newest) ?? 0 })
            #expect(later.statuses.first?.createdAt == harness.time.now.addingTimeInterval(-2))
        }
    }

    @Test func maxIDIsInclusiveAndCountLimits() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.twitter()
            let page = try await client.homeTimeline(TimelineQuery(count: 5))
            let third = page.statuses[2].id
            let older = try await client.homeTimeline(TimelineQuery(count: 3, maxID: third))
            #expect(older.statuses.map(\.id) == Array(page.statuses[2..<5].map(\.id)))
        }
    }

    @Test func excludeRepliesAndTrimUserAreHonoured() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.twitter()
            let original = try await client.update(status: "original")
            _ = try await client.update(status: "a reply", inReplyTo: original.id)
            let all = try await client.homeTimeline(TimelineQuery(count: 2))
            #expect(all.statuses.map(\.text) == ["a reply", "original"])
            let noReplies = try await client.homeTimeline(TimelineQuery(count: 2, excludeReplies: true))
            #expect(noReplies.statuses.map(\.text) == ["original"])
            let trimmed = try await client.homeTimeline(TimelineQuery(count: 2, trimUser: true))
            #expect(trimmed.statuses.allSatisfy { $0.user.id == "1" && $0.user.screenName.isEmpty })
            let trimmedXML = try await client.homeTimeline(TimelineQuery(count: 2, trimUser: true), format: .xml)
            #expect(trimmedXML.statuses.map(\.text) == ["a reply", "original"])
            #expect(trimmedXML.statuses.allSatisfy { $0.user.id == "1" && $0.user.screenName.isEmpty && $0.user.name.isEmpty })
            let fullXML = try await client.homeTimeline(TimelineQuery(count: 1), format: .xml)
            #expect(fullXML.statuses.first?.user.screenName == "herald_sandbox")
        }
    }

    @Test func userTimelineFiltersByUserAndUnknownUserIs404Code34() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.twitter()
            let page = try await client.userTimeline(screenName: "sakura_dev", format: .xml)
            #expect(!page.statuses.isEmpty)
            #expect(page.statuses.allSatisfy { $0.user.screenName == "sakura_dev" && $0.user.name == "さくら" })
            let byID = try await client.userTimeline(userID: "9007199254740993")
            #expect(byID.statuses.map(\.id) == page.statuses.map(\.id))
            let error = await serviceError { try await client.userTimeline(screenName: "nobody_here") }
            #expect(error?.kind == .httpStatus)
            #expect(error?.status == 404)
            #expect(error?.hasAPIError(code: 34) == true)
        }
    }

    @Test func badSignatureIs401Code32AndUnknownTokenIs89() async throws {
        try await SandboxHarness.run { harness in
            var wrongSecret = harness.credentials
            wrongSecret.consumerSecret = "not-the-secret"
            let error = await serviceError { try await harness.twitter(credentials: wrongSecret).homeTimeline() }
            #expect(error?.kind == .httpStatus)
            #expect(error?.status == 401)
            #expect(error?.hasAPIError(code: 32) == true)
            #expect(error?.message == "Could not authenticate you.")

            var wrongToken = harness.credentials
            wrongToken.token = "2-someone-else"
            let tokenError = await serviceError { try await harness.twitter(credentials: wrongToken).update(status: "hi") }
            #expect(tokenError?.status == 401)
            #expect(tokenError?.hasAPIError(code: 89) == true)
            #expect(harness.sandbox.posts().isEmpty)
        }
    }

    @Test func timestampOutsideTheToleranceIs401Code135() async throws {
        try await SandboxHarness.run({ $0.oauthTimestampTolerance = 300 }) { harness in
            let time = harness.time
            func client(skew: TimeInterval) -> TwitterClient {
                let signer = OAuthSigner(credentials: harness.credentials, makeTimestamp: { Int(time.now.timeIntervalSince1970 + skew) })
                return TwitterClient(baseURL: harness.sandbox.baseURL, signer: signer, transport: harness.transport)
            }
            _ = try await client(skew: 299).homeTimeline()
            let error = await serviceError { try await client(skew: -301).homeTimeline() }
            #expect(error?.status == 401)
            #expect(error?.hasAPIError(code: 135) == true)
        }
    }

    @Test func missingAuthorizationIs400Code215() async throws {
        try await SandboxHarness.run { harness in
            let url = harness.sandbox.baseURL.appendingPathComponent("1.1/statuses/home_timeline.json")
            let response = try await harness.transport.send(HTTPRequest(url: url))
            #expect(response.status == 400)
            #expect(String(decoding: response.body, as: UTF8.self).contains("215"))
        }
    }

    @Test func homeTimelineRateLimitIs429Code88WithResetTime() async throws {
        try await SandboxHarness.run({ $0.homeTimelineLimit = 3; $0.rateLimitWindow = 60 }) { harness in
            let client = harness.twitter()
            for _ in 0..<3 { _ = try await client.homeTimeline() }
            let error = await serviceError { try await client.homeTimeline() }
            #expect(error?.kind == .rateLimited)
            #expect(error?.status == 429)
            #expect(error?.hasAPIError(code: 88) == true)
            #expect(error?.rateLimit?.remaining == 0)
            #expect(error?.rateLimit?.reset == harness.time.now.addingTimeInterval(60))
            // The user timeline is not limited, and the window resets with time.
            _ = try await client.userTimeline(screenName: "TwitterDev")
            harness.time.advance(by: 61)
            let page = try await client.homeTimeline()
            #expect(page.rateLimit?.remaining == 2)
        }
    }
}
