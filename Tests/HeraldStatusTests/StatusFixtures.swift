import Foundation
import Herald
import HeraldHTTP
import HeraldSync
import HeraldTestSupport
import Testing

@testable import HeraldStatus

/// An event of the tests, on a topic of their choice.
struct Ping: Event, Hashable {
    var topic: Topic
    var n: Int
}

/// A running endpoint on a free port, and how to read it over real HTTP (curl).
struct RunningEndpoint: Sendable {
    let endpoint: StatusEndpoint
    let task: Task<Void, any Error>
    let url: URL

    static func start(_ sources: StatusSources, limits: HTTPServerLimits = StatusEndpoint.limits,
                      streamBuffer: Int = EventStreamHub.defaultClientBuffer,
                      now: @escaping @Sendable () -> Date = { Date() }) async throws -> RunningEndpoint {
        let endpoint = StatusEndpoint(port: 0, sources: sources, limits: limits, streamBuffer: streamBuffer, now: now)
        let task = Task { try await endpoint.run() }
        let url = try #require(await endpoint.waitUntilServing(), "the endpoint did not start")
        return RunningEndpoint(endpoint: endpoint, task: task, url: url)
    }

    var port: Int { url.port ?? 0 }

    /// `curl -i` of `path`: the status line, the headers and the body.
    func get(_ path: String, method: String = "GET") async throws -> (status: Int, headers: String, body: String) {
        let flags = method == "HEAD" ? ["-I"] : ["-i", "-X", method]
        let output = try await Curl.run(flags + [url.absoluteString + path.dropFirst()])
        let parts = output.stdout.components(separatedBy: "\r\n\r\n")
        let head = parts.first ?? ""
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, head, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    func stop() async throws {
        task.cancel()
        try await task.value
    }
}

/// `/metrics` as series (`name{labels}` as written) to values.
func samples(_ text: String) -> [String: Double] {
    var samples: [String: Double] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " ") else { continue }
        samples[String(line[..<space])] = Double(line[line.index(after: space)...])
    }
    return samples
}

