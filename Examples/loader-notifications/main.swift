// Seed 001 ("Cocoa Notification") redone with Herald.
//
// In the seed, a URLLoader posts `connectionDidFinishNotification` with `object: self` when its
// download ends (a failure notification on error), and the view controller observes with
// `object: loader`, so only its own loader's notifications reach `loadTimeLineDidEnd:` and
// `loadTimeLineFailed:`. Here the notifications are typed events, `object:` is a `Sender`, and
// the observer gets the loader's data in the event instead of reading it back from the loader.
//
// Run: swift run loader-notifications

import Herald

/// A load finished: what `connectionDidFinishNotification` announced.
struct LoadFinished: Event {
    var loader: String
    var statuses: [String]
    var topic: Topic { (try? Topic(tokens: "loader", loader, "finished")) ?? "loader.invalid.finished" }
}

/// A load failed: what the failure notification announced.
struct LoadFailed: Event {
    var loader: String
    var reason: String
    var topic: Topic { (try? Topic(tokens: "loader", loader, "failed")) ?? "loader.invalid.failed" }
}

/// Stands in for seed 001's URLLoader: it "downloads" and publishes the outcome.
struct URLLoader {
    let id: String
    let bus: EventBus
    var sender: Sender { Sender("loader.\(id)") }

    func load(_ result: Result<[String], LoadError>) throws {
        switch result {
        case .success(let statuses):
            try bus.post(LoadFinished(loader: id, statuses: statuses), from: sender)
        case .failure(let error):
            try bus.post(LoadFailed(loader: id, reason: error.reason), from: sender)
        }
    }
}

struct LoadError: Error {
    var reason: String
}

/// Stands in for the seed's view controller: it observes only its own loader.
final class TimelineViewController: Sendable {
    let name: String
    init(name: String) { self.name = name }

    func loadTimeLineDidEnd(_ event: LoadFinished) {
        print("\(name): \(event.statuses.count) statuses from \(event.loader)")
        for status in event.statuses { print("  - \(status)") }
    }

    func loadTimeLineFailed(_ event: LoadFailed) {
        print("\(name): \(event.loader) failed: \(event.reason)")
    }
}

let bus = EventBus()
let timeline = URLLoader(id: "timeline", bus: bus)
let images = URLLoader(id: "images", bus: bus)
let controller = TimelineViewController(name: "timeline view")

// addObserver(_:selector:name:object: loader), twice: one per notification.
let subscriptions = try [
    bus.subscribe(to: LoadFinished.self, from: timeline.sender, observer: controller) { controller, event in
        controller.loadTimeLineDidEnd(event)
    },
    bus.subscribe(to: LoadFailed.self, from: timeline.sender, observer: controller) { controller, event in
        controller.loadTimeLineFailed(event)
    },
    // A log of every loader's outcome, by pattern, with the envelope's sequence number.
    bus.subscribe(matching: "loader.*.*") { envelope in
        print("log: #\(envelope.sequence) \(envelope.topic) from \(envelope.sender?.id ?? "-")")
    },
]

try timeline.load(.success(["Hello from Herald", "テストの投稿です 🐦"]))
try images.load(.success(["not for the timeline view"]))
try timeline.load(.failure(LoadError(reason: "The request timed out.")))
try images.load(.failure(LoadError(reason: "not for the timeline view either")))

let stats = bus.stats()
print("delivered to the timeline view: \(stats.subscriptions.prefix(2).map(\.delivered).reduce(0, +)) of \(stats.published) events")
withExtendedLifetime(subscriptions) {}
