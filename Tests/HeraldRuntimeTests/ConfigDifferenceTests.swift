import Foundation
import HeraldRuntime
import Testing

/// What a reload changes: only what differs as written, with a loader's identity deciding
/// whether its state is kept.
@Suite struct ConfigDifferenceTests {
    static func configuration(_ change: (inout [String: Any]) -> Void = { _ in }) throws -> HeraldConfiguration {
        var object = ConfigFixtures.demo
        change(&object)
        let data = try JSONSerialization.data(withJSONObject: object)
        return try ConfigLoader(environment: [:]).parse(data, baseDirectory: URL(fileURLWithPath: "/tmp"))
    }

    @Test
    func theSameFileChangesNothing() throws {
        #expect(ConfigDifference(from: try Self.configuration(), to: try Self.configuration()).isEmpty)
    }

    @Test
    func aFeedsCAFileOrInsecureKeepsItsStateAndANewURLDoesNot() throws {
        func feeds(_ blog: [String: Any]) throws -> HeraldConfiguration {
            try Self.configuration { object in
                var loaders = object["loaders"] as! [String: Any]
                loaders["blog"] = ["kind": "feed", "url": "https://feeds.example/atom.xml", "every": "15m"].merging(blog) { $1 }
                object["loaders"] = loaders
            }
        }
        let old = try feeds([:])
        let insecure = ConfigDifference(from: old, to: try feeds(["insecure": true]))
        #expect(insecure.changedLoaders == ["blog"] && insecure.loadersWithNewIdentity.isEmpty)
        #expect(insecure.lines.contains("loaders.blog: changed (state kept)"))
        // How it is fetched is not which feed it is either.
        let fetched = ConfigDifference(from: old, to: try feeds(["timeout": "5s", "maxBytes": 1_000_000]))
        #expect(fetched.changedLoaders == ["blog"] && fetched.loadersWithNewIdentity.isEmpty)
        let moved = ConfigDifference(from: old, to: try feeds(["url": "https://feeds.example/rss.xml"]))
        #expect(moved.loadersWithNewIdentity == ["blog"])
    }

    @Test
    func aNewIntervalKeepsTheLoadersStateAndANewRequestDoesNot() throws {
        let old = try Self.configuration()
        let new = try Self.configuration { object in
            var loaders = object["loaders"] as! [String: Any]
            loaders["images"] = ["kind": "tiqav", "service": "tiqav", "every": "10m"]
            loaders["itmedia"] = ["kind": "timeline", "service": "twitter", "timeline": "user", "screenName": "someone", "format": "xml", "every": "2m"]
            loaders["home"] = nil
            loaders["mentions"] = ["kind": "timeline", "service": "twitter", "timeline": "home", "every": "1m"]
            object["loaders"] = loaders
        }
        let difference = ConfigDifference(from: old, to: new)
        #expect(difference.addedLoaders == ["mentions"])
        #expect(difference.removedLoaders == ["home"])
        #expect(difference.changedLoaders == ["images", "itmedia"])
        #expect(difference.loadersWithNewIdentity == ["itmedia"])
        #expect(difference.lines.contains("loaders.images: changed (state kept)"))
        #expect(difference.lines.contains("loaders.itmedia: changed (new identity: its state starts again)"))
    }

    @Test
    func newCredentialsChangeTheLoadersOfTheirServiceAndTheListenerNeedsARestart() throws {
        let old = try Self.configuration()
        let new = try Self.configuration { object in
            var services = object["services"] as! [String: Any]
            services["baas"] = ["url": "sandbox", "tenant": "demo", "appId": "todo", "appKey": "another-key"]
            object["services"] = services
            object["http"] = ["listen": "127.0.0.1:9999"]
        }
        let difference = ConfigDifference(from: old, to: new)
        #expect(difference.changedServices == ["baas"])
        #expect(difference.changedLoaders == ["todos"])
        #expect(difference.loadersWithNewIdentity.isEmpty, "same URL: the same account's items")
        #expect(difference.needsRestart == ["http"])
    }
}
