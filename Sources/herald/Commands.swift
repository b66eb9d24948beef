import Foundation
import HeraldRuntime
import HeraldSandbox

/// What each command does; each returns the exit code.
enum Commands {
    static func loadConfiguration(_ path: String) -> Result<HeraldConfiguration, ConfigError> {
        let url = URL(fileURLWithPath: path)
        do {
            return .success(try ConfigLoader().load(contentsOf: url))
        } catch {
            return .failure(error)
        }
    }

    static func printProblems(_ error: ConfigError, path: String) {
        if error.issues.count == 1, error.issues[0].path.isEmpty {
            let message = error.issues[0].message
            Terminal.err("herald: " + (message.hasPrefix(path) ? message : "\(path): \(message)"))
            return
        }
        let count = error.issues.count
        Terminal.err("herald: \(path) is invalid (\(count) \(count == 1 ? "error" : "errors")):")
        for issue in error.issues { Terminal.err("  \(issue)") }
    }

    static func check(config path: String) -> Int32 {
        switch loadConfiguration(path) {
        case .failure(let error):
            printProblems(error, path: path)
            return 2
        case .success(let configuration):
            let loaders = configuration.loaders.count, services = configuration.services.count
            let subscribers = configuration.subscribers.count
            func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
            Terminal.out("\(path): ok (\(count(services, "service")), \(count(loaders, "loader")), \(count(subscribers, "subscriber")))")
            return 0
        }
    }

    static func run(config path: String, duration: Duration?) async -> Int32 {
        let configuration: HeraldConfiguration
        switch loadConfiguration(path) {
        case .failure(let error):
            printProblems(error, path: path)
            return 2
        case .success(let loaded):
            configuration = loaded
        }
        let daemon = HeraldDaemon(configuration: configuration)
        // Signals are caught before anything starts, so an early SIGTERM still stops cleanly.
        let stop = CancelOnSignal()
        let signals = Terminal.onTermination {
            Terminal.err("herald: stopping")
            stop.fire()
        }
        defer { signals.forEach { $0.cancel() } }
        let task = Task {
            try await daemon.run(for: duration) { started in
                if let url = started.sandboxURL { Terminal.err("herald: sandbox at \(url.absoluteString)") }
                Terminal.err("herald: running \(started.loaders.count) loader\(started.loaders.count == 1 ? "" : "s") (\(started.loaders.joined(separator: ", "))); Ctrl-C to stop")
            }
        }
        stop.attach(task)
        switch await task.result {
        case .success(let stopped):
            Terminal.err("herald: stopped" + (stopped.drained ? "" : " (\(stopped.discarded) events not delivered)"))
            return 0
        case .failure(let error):
            Terminal.err("herald: \(error)")
            return 1
        }
    }

    static func sandbox(port: Int?, config path: String?) async -> Int32 {
        var settings = SandboxConfiguration()
        if let path {
            switch loadConfiguration(path) {
            case .failure(let error):
                printProblems(error, path: path)
                return 2
            case .success(let configuration):
                settings = configuration.sandboxConfiguration()
            }
        }
        if let port { settings.port = port }
        let stop = CancelOnSignal()
        let signals = Terminal.onTermination { stop.fire() }
        defer { signals.forEach { $0.cancel() } }
        let sandbox: Sandbox
        do {
            sandbox = try await Sandbox.start(settings)
        } catch {
            Terminal.err("herald: cannot start the sandbox: \(error)")
            return 1
        }
        // Keys and tokens are not printed (they may be real ones from the environment);
        // GET /_sandbox/config shows the sandbox's to any tool on this machine.
        Terminal.out("sandbox listening on \(sandbox.baseURL.absoluteString)")
        Terminal.out("twitter: OAuth 1.0a with the \(path == nil ? "standard sandbox" : "configured") credentials (GET /_sandbox/config)")
        Terminal.out("baas: tenant \(settings.baasTenant), app id \(settings.baasApplicationID)")
        let task = Task { await sandbox.run() }
        stop.attach(task)
        await task.value
        Terminal.out("sandbox stopped")
        return 0
    }
}
