import Foundation
import HeraldIO
import HeraldSync

/// The official Go client (nats.go) running the NATS rows' JetStream workloads against the
/// same server in the same run: `Benchmarks/nats-go-baseline/main.go`, built offline from
/// Debian's `golang-go` and `golang-github-nats-io-go-nats-dev` into `.build/nats-go-baseline`.
/// Where Go or nats.go is missing, the column is skipped with a note.
enum NATSGoBaseline {
    /// The built program, after ``build()`` succeeded.
    nonisolated(unsafe) static var executable: URL?

    /// The package's root (this file is `Benchmarks/herald-bench/NATSGoBaseline.swift`).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static let nats = "/usr/share/gocode/src/github.com/nats-io/nats.go"

    /// `go`: `$HERALD_BENCH_GO` when set (a path; nothing there means no Go), else on PATH (or
    /// Debian's /usr/lib/go/bin), if installed.
    static var goExecutable: String? {
        if let chosen = ProcessInfo.processInfo.environment["HERALD_BENCH_GO"] {
            return FileManager.default.isExecutableFile(atPath: chosen) ? chosen : nil
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/lib/go/bin", "/usr/local/go/bin"]
        return directories.map { $0 + "/go" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Builds the program; nil when it is ready, else why the column is skipped.
    static func build() async -> String? {
        let install = "apt-get install -y golang-go golang-github-nats-io-go-nats-dev"
        guard let go = goExecutable else { return "nats.go column skipped: Go is not installed (\(install))" }
        guard FileManager.default.fileExists(atPath: nats) else {
            return "nats.go column skipped: nats.go is not installed at \(nats) (\(install))"
        }
        let directory = packageRoot.appendingPathComponent(".build/nats-go-baseline")
        let output = directory.appendingPathComponent("nats-go-baseline")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            return "nats.go column skipped: cannot create \(directory.path): \(error)"
        }
        var environment = ProcessInfo.processInfo.environment
        environment["GO111MODULE"] = "off"
        environment["GOPATH"] = "/usr/share/gocode"
        environment["GOFLAGS"] = ""
        // Offline and inside .build: no module proxy, no cache in the home directory.
        environment["GOPROXY"] = "off"
        environment["GOCACHE"] = directory.appendingPathComponent("go-cache").path
        let result = await run(go, ["build", "-o", output.path, "./Benchmarks/nats-go-baseline"],
                               environment: environment, in: packageRoot)
        guard result.status == 0 else {
            return "nats.go column skipped: go build failed (exit \(result.status)): \(result.errors.trimmingCharacters(in: .whitespacesAndNewlines))"
        }
        executable = output
        return nil
    }

    /// Runs one workload (`publish` or `consume`) of `n` messages; its rate and the CPU seconds
    /// (getrusage of the Go process) of its timed part.
    static func run(_ workload: String, _ n: Int, server: String) async throws -> (rate: Double, cpu: Double) {
        guard let executable else { throw BenchmarkError.lostEvents("nats-go-baseline is not built") }
        let result = await run(executable.path, ["-server", server, "-workload", workload, "-n", String(n),
                                                 "-window", String(NATSWorkloads.window), "-payload", String(NATSWorkloads.payload.count)],
                               environment: nil, in: packageRoot)
        struct Figures: Decodable { var rate: Double; var cpu: Double }
        guard result.status == 0, let figures = try? JSONDecoder().decode(Figures.self, from: Data(result.output.utf8)) else {
            throw BenchmarkError.lostEvents("nats-go-baseline \(workload) (exit \(result.status)): \(result.errors)\(result.output)")
        }
        return (figures.rate, figures.cpu)
    }

    /// Runs a program to its end on a thread of its own (never the cooperative pool).
    private static func run(_ path: String, _ arguments: [String], environment: [String: String]?, in directory: URL) async -> (status: Int32, output: String, errors: String) {
        await withCheckedContinuation { continuation in
            NamedThread.start("herald-bench.child") {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: path)
                process.arguments = arguments
                if let environment { process.environment = environment }
                process.currentDirectoryURL = directory
                let output = Pipe(), errors = Pipe()
                process.standardOutput = output
                process.standardError = errors
                do {
                    try process.run()
                } catch {
                    continuation.resume(returning: (-1, "", "\(path): \(error)"))
                    return
                }
                // Both pipes are read to their end before waiting, so neither can fill and stall it.
                let errorText = ErrorText()
                let errorsDone = DispatchSemaphore(value: 0)
                NamedThread.start("herald-bench.child-stderr") {
                    let data = errors.fileHandleForReading.readDataToEndOfFile()
                    errorText.data.withLock { $0 = data }
                    errorsDone.signal()
                }
                let data = output.fileHandleForReading.readDataToEndOfFile()
                errorsDone.wait()
                process.waitUntilExit()
                continuation.resume(returning: (process.terminationStatus, String(decoding: data, as: UTF8.self),
                                                String(decoding: errorText.data.withLock { $0 }, as: UTF8.self)))
            }
        }
    }
}

/// What a child wrote to its standard error, read on a thread of its own.
private final class ErrorText: Sendable {
    let data = SyncLock(Data())
}
