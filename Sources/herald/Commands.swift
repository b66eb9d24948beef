import Foundation
import HeraldRuntime
import HeraldIO
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

    /// The configuration at `path`, or nil after printing its problems.
    static func validConfiguration(_ path: String) -> HeraldConfiguration? {
        switch loadConfiguration(path) {
        case .failure(let error):
            printProblems(error, path: path)
            return nil
        case .success(let configuration):
            return configuration
        }
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
            for warning in configuration.warnings { Terminal.err("herald: warning: \(warning)") }
            return 0
        }
    }

    /// `herald run`: the daemon, which stops on SIGINT or SIGTERM itself.
    static func run(config path: String, duration: Duration?) async -> Int32 {
        guard let configuration = validConfiguration(path) else { return 2 }
        for warning in configuration.warnings { Terminal.err("herald: warning: \(warning)") }
        let daemon = HeraldDaemon(configuration: configuration)
        do {
            // SIGHUP (and 'herald reload') reloads this file; systemd is told when NOTIFY_SOCKET is set.
            let host = DaemonHost(configFile: URL(fileURLWithPath: path), reloadOnSIGHUP: true,
                                  notifier: SystemdNotifier(environment: ProcessInfo.processInfo.environment))
            let stopped = try await daemon.run(for: duration, stopOnSignals: true, host: host) { started in
                if let url = started.sandboxURL { Terminal.err("herald: sandbox at \(url.absoluteString)") }
                if let url = started.statusURL { Terminal.err("herald: status at \(url.absoluteString) (metrics at \(url.absoluteString)metrics)") }
                Terminal.err("herald: running \(started.loaders.count) loader\(started.loaders.count == 1 ? "" : "s") (\(started.loaders.joined(separator: ", "))); Ctrl-C to stop")
            } stopping: { reason in
                switch reason {
                case .signal:
                    Terminal.err("herald: stopping")
                case .signalAgain:
                    Terminal.err("herald: stopping at once")
                    exit(1)
                case .timeElapsed, .cancelled, .failed:
                    break
                }
            } reloaded: { reloaded in
                report(reloaded)
            }
            Terminal.err("herald: stopped" + (stopped.drained ? "" : " (\(stopped.discarded) events not delivered)"))
            return 0
        } catch {
            Terminal.err("herald: \(error)")
            return 1
        }
    }

    static func sandbox(port: Int?, config path: String?) async -> Int32 {
        var configuration: HeraldConfiguration?
        if let path {
            switch loadConfiguration(path) {
            case .failure(let error):
                printProblems(error, path: path)
                return 2
            case .success(let loaded):
                configuration = loaded
            }
        }
        // Keys and tokens are not printed (they may be real ones from the environment);
        // GET /_sandbox/config shows the sandbox's to any tool on this machine.
        let configured = path != nil
        do {
            try await StandaloneSandbox(configuration: configuration, port: port).run(stopOnSignals: true, started: { started in
                Terminal.out("sandbox listening on \(started.baseURL.absoluteString)")
                Terminal.out("twitter: OAuth 1.0a with the \(configured ? "configured" : "standard sandbox") credentials (GET /_sandbox/config)")
                Terminal.out("baas: tenant \(started.baasTenant), app id \(started.baasApplicationID)")
            })
        } catch {
            Terminal.err("herald: \(error)")
            return 1
        }
        Terminal.out("sandbox stopped")
        return 0
    }

    /// `herald tail`: prints the archive, then (with `follow`) what is appended, until a signal.
    static func tail(path: String, topics: [String], follow: Bool, json: Bool) async -> Int32 {
        let tail: ArchiveTail
        do {
            tail = try ArchiveTail(path: path, topics: topics, json: json)
        } catch {
            Terminal.err("herald: --topic: \(error)")
            return 2
        }
        guard follow else {
            guard !tail.files().isEmpty else {
                Terminal.err("herald: \(path): no such file")
                return 1
            }
            do {
                try tail.lines().forEach(Terminal.out)
            } catch {
                Terminal.err("herald: \(path): cannot be read: \(error.localizedDescription)")
                return 1
            }
            return 0
        }
        // Under a service group with the daemon's signal sequence: SIGINT or SIGTERM stops it
        // (status 0); the same signal again, over a second later, exits at once.
        do {
            try await tail.follow(stopOnSignals: true, show: { $0.forEach(Terminal.out) }, stopping: { reason in
                if case .signalAgain = reason {
                    Terminal.err("herald: stopping at once")
                    exit(1)
                }
            })
        } catch {
            Terminal.err("herald: \(error)")
            return 1
        }
        return 0
    }

    /// `herald post`: one status, with a progress bar while a video uploads.
    static func post(text: String, media: String?, config path: String, service: String?, replyTo: String? = nil) async -> Int32 {
        guard let configuration = validConfiguration(path) else { return 2 }
        let poster = SinglePost(configuration: configuration, service: service)
        do {
            _ = try poster.serviceName()
        } catch {
            Terminal.err("herald: \(error)")
            return 2
        }
        var data: Data?
        if let media {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: media, isDirectory: &isDirectory), !isDirectory.boolValue else {
                Terminal.err("herald: --media \(media): no such file")
                return 2
            }
            // Not read into memory when it is too large to post anyway.
            let size = (try? FileManager.default.attributesOfItem(atPath: media)[.size] as? Int) ?? 0
            let limit = SinglePost.maxMediaBytes
            guard size <= limit else {
                Terminal.err("herald: post failed: --media \(media): \(size) bytes; the limit is \(limit) bytes (15 MB)")
                return 1
            }
            // Read on a thread of its own, not the cooperative pool.
            let read = await BlockingIOThread(name: "herald.media-read").run { FileManager.default.contents(atPath: media) }
            guard let contents = read else {
                Terminal.err("herald: --media \(media): cannot be read")
                return 2
            }
            data = contents
        }
        let bar = ProgressBar(onTerminal: isatty(STDERR_FILENO) == 1)
        // SIGINT or SIGTERM cancels the post (the request in flight stops), under a service group
        // with the daemon's signal sequence; then one line says how far it had gone, and the
        // status is 128 + the signal's number. The same signal again, over a second later,
        // exits at once.
        let interruption = PostInterruption()
        let result: Result<SinglePost.Posted, DaemonError>
        do throws(DaemonError) {
            result = .success(try await poster.post(text, media: data, inReplyTo: replyTo, stopOnSignals: true, progress: { bar.show($0) },
                                                    stage: { interruption.reached($0) }) { reason in
                switch reason {
                case .signal(let number):
                    interruption.signalled(number)
                case .signalAgain:
                    Terminal.err("herald: stopping at once")
                    exit(1)
                case .timeElapsed, .cancelled, .failed:
                    break
                }
            })
        } catch {
            result = .failure(error)
        }
        bar.finish()
        switch result {
        case .success(let posted):
            // Posted, even if a signal came as the answer did: say so.
            Terminal.out("posted status \(posted.statusID) via \(posted.service)" + (posted.mediaID.map { " with media \($0)" } ?? ""))
            if let url = posted.sandboxURL {
                Terminal.err("herald: (to the embedded sandbox at \(url.absoluteString), gone now that herald exits; run 'herald sandbox' to keep one)")
            }
            return 0
        case .failure(let error):
            if let signal = interruption.signal {
                Terminal.err(interruption.message)
                return PostInterruption.exitStatus(for: signal)
            }
            Terminal.err("herald: post failed: \(error)")
            return 1
        }
    }
}
