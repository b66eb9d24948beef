import Foundation
import HeraldTestSupport
import Testing

@testable import HeraldSandbox

/// Mastodon.py (pinned in .ci/python-clients.txt), an independent client, reads what the
/// sandbox's Mastodon emulator answers: its version check, a post made twice with one
/// idempotency key, a timeline with `since_id` and the `Link` header's next page, and a media
/// upload it waits for. The script fails (and so the test) on anything it cannot read.
@Suite struct MastodonPyAgainstSandboxTests {
    static let script = #"""
import json, sys
from mastodon import Mastodon

base, token = sys.argv[1], sys.argv[2]
m = Mastodon(access_token=token, api_base_url=base, ratelimit_method="throw")
version = m.retrieve_mastodon_version()
assert m.verify_minimum_version("4.0.0"), version

first = m.status_post("Hello from Mastodon.py 🐘", idempotency_key="herald-py-1", visibility="unlisted",
                      spoiler_text="a warning", language="en")
again = m.status_post("Hello from Mastodon.py 🐘", idempotency_key="herald-py-1", visibility="unlisted",
                      spoiler_text="a warning", language="en")

home = m.timeline_home(limit=5)
oldest = home[-1]["id"]
newer = m.timeline_home(since_id=oldest, limit=40)
older = m.fetch_next(home)

media = m.media_post(b"\x00\x00\x00\x18ftypmp42" + bytes(200), mime_type="video/mp4", description="a test clip",
                     synchronous=True)
with_media = m.status_post("With a clip", media_ids=[media])

print(json.dumps({
    "version": version,
    "first": str(first["id"]), "again": str(again["id"]), "visibility": first["visibility"],
    "spoiler": first["spoiler_text"], "content": first["content"],
    "home": [str(s["id"]) for s in home], "newer": [str(s["id"]) for s in newer],
    "older": [str(s["id"]) for s in older] if older else [],
    "media_url": media["url"], "media_description": media["description"],
    "attached": [str(a["id"]) for a in with_media["media_attachments"]], "media_id": str(media["id"]),
}))
"""#

    struct Report: Decodable {
        var version: String
        var first: String
        var again: String
        var visibility: String
        var spoiler: String
        var content: String
        var home: [String]
        var newer: [String]
        var older: [String]
        var media_url: String?
        var media_description: String?
        var attached: [String]
        var media_id: String
    }

    @Test(.enabled(if: !PythonClients.skipped, "HERALD_SKIP_PYTHON_CLIENTS=1"))
    func mastodonPyPostsOnceReadsTimelinesAndWaitsForMedia() async throws {
        var configuration = SandboxConfiguration()
        configuration.mastodon.mediaPolls = 1
        let sandbox = try await Sandbox.start(configuration)
        defer { Task { await sandbox.stop() } }
        let output = try await PythonClients.run(Self.script, [sandbox.baseURL.absoluteString, configuration.mastodon.token])
        try #require(output.status == 0, "Mastodon.py failed: \(output.stderr)")
        let report = try JSONDecoder().decode(Report.self, from: Data(output.stdout.utf8))

        #expect(report.version == "4.3.0")
        #expect(report.first == report.again)
        #expect(report.visibility == "unlisted" && report.spoiler == "a warning")
        #expect(report.content == "<p>Hello from Mastodon.py 🐘</p>")
        #expect(report.home.count == 5)
        // The timeline grows on the sandbox's clock: a status may arrive between the two reads,
        // at the head; what was read before follows, the oldest (since_id) excluded.
        #expect(Array(report.newer.suffix(report.home.count - 1)) == Array(report.home.dropLast()), "\(report.newer)")
        #expect(!report.newer.contains(report.home[4]))
        #expect(report.older.count == 5 && !Set(report.older).contains(report.home[4]))
        #expect(report.media_url?.hasPrefix(sandbox.baseURL.absoluteString + "/system/media/") == true)
        #expect(report.media_description == "a test clip")
        #expect(report.attached == [report.media_id])
        let posts = sandbox.mastodonPosts()
        #expect(posts.map(\.text) == ["Hello from Mastodon.py 🐘", "With a clip"])
        #expect(posts.first?.idempotencyKey == "herald-py-1")
    }
}
