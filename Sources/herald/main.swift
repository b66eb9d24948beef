// `herald`: until the daemon lands (loaders, schedules, config.json), this shows the bus at work.

import Herald

struct LoadFinished: Event {
    var loader: String
    var items: Int
    var new: Int
    var topic: Topic { (try? Topic(tokens: "loader", loader, "finished")) ?? "loader.invalid.finished" }
}

struct LoadFailed: Event {
    var loader: String
    var reason: String
    var topic: Topic { (try? Topic(tokens: "loader", loader, "failed")) ?? "loader.invalid.failed" }
}

let arguments = CommandLine.arguments.dropFirst()
if arguments.contains("--help") || arguments.contains("-h") {
    print("""
        usage: herald [--help] [--version]

        Herald is a typed event bus for Swift. The daemon (loaders, schedules, config.json)
        is not built yet; for now `herald` runs a short demonstration of the bus: loaders
        publish finished and failed events, subscribers receive them inline, queued and by
        topic pattern, and the bus shuts down draining every mailbox.
        """)
    exit(0)
}
if arguments.contains("--version") {
    print("herald 0.1.0")
    exit(0)
}
if let unknown = arguments.first {
    print("herald: unknown option '\(unknown)' (see herald --help)")
    exit(2)
}

let bus = EventBus()
let subscriptions = try [
    bus.subscribe(to: LoadFinished.self, from: "loader.home") { event in
        print("home view: \(event.items) statuses, \(event.new) new")
    },
    bus.subscribe(matching: "loader.*.failed", name: "failures") { envelope in
        print("failure log: \(envelope.topic) #\(envelope.sequence)")
    },
    bus.subscribe(matching: "loader.>", name: "archive", delivery: .queued(capacity: 64)) { envelope in
        print("archive (queued): #\(envelope.sequence) \(envelope.topic)")
    },
]

try bus.post(LoadFinished(loader: "home", items: 20, new: 3), from: "loader.home")
try bus.post(LoadFinished(loader: "images", items: 12, new: 12), from: "loader.images")
try bus.post(LoadFailed(loader: "todos", reason: "503 Service Unavailable"), from: "loader.todos")

let report = await bus.shutdown(timeout: .seconds(5))
print("shut down: drained \(report.drained ? "everything" : "partly"), \(bus.stats().published) events published")
withExtendedLifetime(subscriptions) {}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
