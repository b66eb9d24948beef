import Foundation
import Testing

@testable import HeraldStatus

@Suite struct StatusTableTests {
    @Test func theTableAlignsColumnsAndSaysTimesRelativeToTheReport() {
        let now = Date(timeIntervalSince1970: 1_780_000_000)
        func loader(_ id: String, _ kind: String, _ state: String, result: String?, message: String?, next: Double?, pulls: Int, new: Int) -> StatusReport.Loader {
            StatusReport.Loader(id: id, kind: kind, state: state, pulls: pulls, failures: [:], newItems: new, lastRun: now.addingTimeInterval(-12),
                                lastResult: result, lastMessage: message, lastSuccess: nil, nextRun: next.map { now.addingTimeInterval($0) },
                                consecutiveFailures: 0)
        }
        let report = StatusReport(
            time: now, ready: true, bus: .init(published: 42, topics: [], subscriptions: []),
            loaders: [loader("home", "timeline", "waiting", result: "finished", message: "20 items, 3 new", next: 18, pulls: 12, new: 140),
                      loader("todos", "todo", "loading", result: "failed", message: "transport: refused", next: nil, pulls: 3, new: 0)],
            archives: [], posts: [.init(name: "posts", held: 0, pending: [.init(key: "tweet:item:1", rule: "tweet", service: "twitter",
                                                                                 created: now.addingTimeInterval(-125))],
                                        sent: ["tweet": 2], failed: [:], rules: ["tweet"])],
            streams: .init(clients: 1, dropped: 0), process: nil)
        let text = StatusTable.render(report, url: URL(string: "http://127.0.0.1:8420/")!)
        #expect(text == """
            herald at http://127.0.0.1:8420/: ready, 42 events published, 1 live client
            LOADER  KIND      STATE    LAST RUN  RESULT                      NEXT RUN  PULLS  NEW
            home    timeline  waiting  12s ago   finished: 20 items, 3 new   in 18s       12  140
            todos   todo      loading  12s ago   failed: transport: refused  -             3    0
            outbox posts: 1 waiting, 0 held, 2 sent, 0 failed
              tweet  tweet:item:1  made 2m 5s ago

            """)
    }
}
