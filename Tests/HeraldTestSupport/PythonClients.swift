import Foundation

/// The virtual environment of independent Python clients (tweepy, Mastodon.py, feedparser,
/// standardwebhooks, pinned in `.ci/python-clients.txt`) that prove the wire formats.
///
/// `.ci/run` makes it at `<package>/.build/python-clients`; when it is missing, the first test
/// that asks makes it (PyPI must be reachable). A test that needs it fails when it cannot be
/// had, unless `HERALD_SKIP_PYTHON_CLIENTS=1` (a machine that cannot have it) skips it.
public enum PythonClients {
    /// The package's root, from this file's place in it.
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// The environment's directory.
    public static let environment = packageRoot.appendingPathComponent(".build/python-clients")
    /// Its interpreter.
    public static let python = environment.appendingPathComponent("bin/python3")
    /// Whether tests that need the clients are skipped on this machine.
    public static let skipped = ProcessInfo.processInfo.environment["HERALD_SKIP_PYTHON_CLIENTS"] == "1"

    private static let preparing = Preparation()

    /// The interpreter, with every pinned client importable; made once per test process when missing.
    public static func interpreter() async throws -> URL {
        try await preparing.run()
    }

    /// Runs `script` (Python source) with `arguments` under the environment's interpreter.
    public static func run(_ script: String, _ arguments: [String] = [], environment extra: [String: String] = [:]) async throws -> Curl.Output {
        let python = try await interpreter()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-py-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("script.py")
        try Data(script.utf8).write(to: file)
        if extra.isEmpty { return try await Tool.run(python.path, [file.path] + arguments) }
        let environment = ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
        return try await Tool.run("/usr/bin/env", environment.map { "\($0.key)=\($0.value)" } + [python.path, file.path] + arguments)
    }

    /// Why the environment could not be made.
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    private actor Preparation {
        private var made: Result<URL, Unavailable>?

        func run() async throws -> URL {
            if let made { return try made.get() }
            let result = await make()
            made = result
            return try result.get()
        }

        private func make() async -> Result<URL, Unavailable> {
            let requirements = PythonClients.packageRoot.appendingPathComponent(".ci/python-clients.txt")
            let check = "import tweepy, mastodon, feedparser, standardwebhooks"
            if FileManager.default.isExecutableFile(atPath: python.path),
               let found = try? await Tool.run(python.path, ["-c", check]), found.status == 0 {
                return .success(python)
            }
            do {
                let venv = try await Tool.run("/usr/bin/env", ["python3", "-m", "venv", PythonClients.environment.path])
                guard venv.status == 0 else { return .failure(Unavailable(description: "python3 -m venv failed: \(venv.stderr)")) }
                let pip = try await Tool.run(python.path, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", requirements.path])
                guard pip.status == 0 else {
                    return .failure(Unavailable(description: "pip install -r .ci/python-clients.txt failed (set HERALD_SKIP_PYTHON_CLIENTS=1 on a machine without PyPI): \(pip.stderr)"))
                }
                return .success(python)
            } catch {
                return .failure(Unavailable(description: "the Python clients' environment cannot be made: \(error)"))
            }
        }
    }
}
