import Foundation
import Testing
import HeraldTestSupport

/// Each example runs as a process against its own sandbox and exits 0 with the output it promises.
@Suite struct ExampleProgramTests {
    @Test(.timeLimit(.minutes(5)))
    func timelineObserverSeesOnlyItsLoadersEvents() async throws {
        let binary = try #require(BuiltProducts.url(of: "timeline-observer"))
        let result = try #require(try await ChildProcess.run(binary, []))
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "loadTimeLineDidEnd: 5 statuses, 5 new")
        // The second load sends since_id: only what is newer comes back, here nothing.
        #expect(lines.contains("loadTimeLineDidEnd: 0 statuses, 0 new"))
        #expect(lines.contains("[loader.missing] failed: httpStatus 404: Sorry, that page does not exist."))
        // The sender-filtered observer never hears the other loader's failure.
        #expect(!lines.contains { $0.hasPrefix("loadTimeLineFailed") })
        #expect(lines.filter { $0.hasPrefix("  ITmedia NEWS: ") }.count == 5)
    }

    @Test(.timeLimit(.minutes(5)))
    func tiqavViewerPrintsImageURLsOnEachPull() async throws {
        let binary = try #require(BuiltProducts.url(of: "tiqav-viewer"))
        let result = try #require(try await ChildProcess.run(binary, ["--pulls", "2"]))
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("pull ") } == ["pull 1:", "pull 2:"])
        let images = lines.filter { $0.contains("http://127.0.0.1:") }
        #expect(images.count == 10)
        #expect(images.allSatisfy { $0.contains("/img/") })
        #expect(images.prefix(5).allSatisfy { $0.hasPrefix("* ") })
    }

    @Test(.timeLimit(.minutes(5)))
    func todoFlowAddsDeletesAndReloads() async throws {
        let binary = try #require(BuiltProducts.url(of: "todo-flow"))
        let result = try #require(try await ChildProcess.run(binary, []))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == """
            list (0, oldest update first):
            todo.added: Buy milk
            list (1, oldest update first):
              - Buy milk  (new)
            todo.added: Write the Herald docs
            list (2, oldest update first):
              - Buy milk
              - Write the Herald docs  (new)
            todo.deleted: Buy milk
            list (1, oldest update first):
              - Write the Herald docs
              (1 removed)

            """)
    }
}
