// Seed 001 redone: a loader posts "finished" / "failed" and an observer, filtered by sender
// (NotificationCenter's `object:`), receives only that loader's events.
//
//     swift run timeline-observer
import Foundation
import Herald
import HeraldLoaders
import HeraldSandbox
import HeraldServices

let sandbox = try await Sandbox.start()
let keys = sandbox.configuration.credentials
let twitter = TwitterClient(
    baseURL: sandbox.baseURL,
    credentials: OAuthCredentials(consumerKey: keys.consumerKey, consumerSecret: keys.consumerSecret,
                                  token: keys.token, tokenSecret: keys.tokenSecret),
    transport: SchemeRoutingTransport())
let bus = EventBus()

// Two loaders on one bus: ITmedia's timeline as XML (as in the seed), and a user that does not exist.
let itmedia = try TimelineLoader(id: "itmedia", client: twitter,
                                 request: .init(timeline: .user(screenName: "itmedia"), count: 5, format: .xml), bus: bus)
let missing = try TimelineLoader(id: "missing", client: twitter,
                                 request: .init(timeline: .user(screenName: "nobody_here")), bus: bus)

// The observer: `from: itmedia.sender` is `addObserver(_:selector:name:object: loader)`.
let finished = try bus.subscribe(to: TimelineLoaded.self, from: itmedia.sender) { event in
    print("loadTimeLineDidEnd: \(event.statuses.count) statuses, \(event.newStatuses.count) new")
    for status in event.statuses {
        print("  \(status.user.name): \(status.text.replacingOccurrences(of: "\n", with: " "))")
    }
}
let failed = try bus.subscribe(to: LoadFailed.self, from: itmedia.sender) { event in
    print("loadTimeLineFailed: \(event.error)")
}
// Another observer watches every loader's failures by topic pattern.
let anyFailure = try bus.subscribe(matching: "loader.*.failed") { envelope in
    print("[\(envelope.sender?.id ?? "?")] failed: \(envelope.event(as: LoadFailed.self)?.error.description ?? "?")")
}

_ = await itmedia.load()
_ = await missing.load()
_ = await itmedia.load()   // nothing new the second time

withExtendedLifetime([finished, failed, anyFailure]) {}
_ = await bus.shutdown()
await sandbox.stop()
