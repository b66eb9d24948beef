import Foundation
import HeraldSandbox
import HeraldTestSupport
import Testing

/// tweepy (pinned in `.ci/python-clients.txt`), an independent X API v2 client, against the
/// sandbox's v2 emulation with OAuth 1.0a user context: if the sandbox answers something
/// tweepy cannot read or sign for, the script fails and so does the test.
///
/// tweepy's `Client.request` hard-codes `https://api.twitter.com`; the script wraps the
/// client's `requests` session so each URL's scheme and host become the sandbox's before the
/// request is prepared (and signed), and nothing else changes.
@Suite struct XTweepyTests {
    static let script = #"""
    import json, sys, tweepy
    base, consumer_key, consumer_secret, token, token_secret, text = sys.argv[1:7]
    client = tweepy.Client(consumer_key=consumer_key, consumer_secret=consumer_secret,
                           access_token=token, access_token_secret=token_secret)
    send = client.session.request
    def to_sandbox(method, url, *args, **kwargs):
        assert url.startswith("https://api.twitter.com/2/"), url
        return send(method, base + url[len("https://api.twitter.com"):], *args, **kwargs)
    client.session.request = to_sandbox
    fields = dict(tweet_fields=["created_at", "author_id"], expansions=["author_id"], user_auth=True)
    first = client.get_home_timeline(max_results=5, **fields)
    newest = first.meta["newest_id"]
    created = client.create_tweet(text=text, user_auth=True)
    after = client.get_home_timeline(since_id=newest, **fields)
    duplicate = None
    try:
        client.create_tweet(text=text, user_auth=True)
    except tweepy.Forbidden as error:
        duplicate = str(error)
    print(json.dumps({
        "first": [str(post.id) for post in first.data],
        "authors": sorted(user.username for user in first.includes["users"]),
        "created": created.data["id"],
        "after": [str(post.id) for post in after.data],
        "afterText": after.data[0].text,
        "afterAuthor": str(after.data[0].author_id),
        "afterCreated": after.data[0].created_at.isoformat(),
        "duplicate": duplicate,
    }))
    """#

    struct Result: Decodable {
        var first: [String]
        var authors: [String]
        var created: String
        var after: [String]
        var afterText: String
        var afterAuthor: String
        var afterCreated: String
        var duplicate: String?
    }

    @Test(.enabled(if: !PythonClients.skipped, "HERALD_SKIP_PYTHON_CLIENTS=1"))
    func tweepyCreatesAPostAndReadsTheHomeTimelineSinceAnID() async throws {
        var configuration = SandboxConfiguration(initialStatusCount: 12)
        // The timeline does not grow during the test: the read since the newest id must see
        // tweepy's post alone, however slow the machine.
        configuration.statusInterval = 3600
        let sandbox = try await Sandbox.start(configuration)
        do {
            try await check(sandbox)
        } catch {
            await sandbox.stop()
            throw error
        }
        await sandbox.stop()
    }

    private func check(_ sandbox: Sandbox) async throws {
        let credentials = sandbox.configuration.credentials
        let text = "tweepy says hello 🎉 & 日本語"
        let output = try await PythonClients.run(Self.script, [
            sandbox.baseURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/")),
            credentials.consumerKey, credentials.consumerSecret, credentials.token, credentials.tokenSecret, text,
        ])
        #expect(output.status == 0, "tweepy failed: \(output.stderr)")
        let result = try JSONDecoder().decode(Result.self, from: Data(output.stdout.utf8))
        #expect(result.first.count == 5)
        #expect(!result.authors.isEmpty)
        let posted = try #require(sandbox.posts().first)
        #expect(sandbox.posts().count == 1)
        #expect(posted.text == text)
        #expect(result.created == posted.id)
        #expect(result.after == [posted.id])
        #expect(result.afterText == text)
        #expect(result.afterAuthor == "1")
        #expect(result.afterCreated.hasSuffix("+00:00"))
        #expect(result.duplicate?.contains("duplicate content") == true)
    }
}
