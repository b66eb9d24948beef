import Foundation
import HeraldSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A real `nats-server` child process for tests: `nats-server -js -sd <tmpdir> -a 127.0.0.1
/// -p <free port>`. ``start(jetStream:arguments:)`` returns once the server said it is ready
/// and answered a TCP connection with `INFO` (no sleeping); ``restart()`` brings it back on the
/// same port and data directory (for reconnect tests); ``stop()`` ends it. A server still
/// running when the object is released is killed.
///
/// It runs as a ``ChildProcess`` (its log read, its exit awaited on threads of their own, never
/// on the cooperative pool). `Sendable`: the process is behind a lock.
public final class NATSServerProcess: Sendable {
    /// The TCP port clients connect to.
    public let port: Int
    /// The JetStream store directory (`-sd`), kept across restarts and removed by ``stop()``.
    public let dataDirectory: URL
    /// The arguments after the defaults (cluster options, say).
    public let extraArguments: [String]
    /// Whether JetStream is on (`-js`).
    public let jetStream: Bool
    private let process = SyncLock<ChildProcess?>(nil)
    /// The logs of the runs before a restart.
    private let log = SyncLock("")

    /// `nats://127.0.0.1:<port>`.
    public var url: String { "nats://127.0.0.1:\(port)" }

    /// The server's log so far (for a failing test's message).
    public var output: String {
        let running = process.withLock { $0 }
        return log.withLock { $0 } + (running.map { $0.stderr + $0.stdout } ?? "")
    }

    /// The path of `nats-server` ($NATS_SERVER, then PATH, then /usr/sbin and /usr/local/bin), if installed.
    public static var executable: String? {
        if let path = ProcessInfo.processInfo.environment["NATS_SERVER"], FileManager.default.isExecutableFile(atPath: path) { return path }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/bin", "/usr/bin"]
        return directories.map { $0 + "/nats-server" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Whether `nats-server` is installed (tests need it; `.ci/run` installs it).
    public static var isAvailable: Bool { executable != nil }

    init(port: Int, dataDirectory: URL, jetStream: Bool, extraArguments: [String]) {
        self.port = port
        self.dataDirectory = dataDirectory
        self.jetStream = jetStream
        self.extraArguments = extraArguments
    }

    deinit {
        process.withLock { child in
            if let child, child.isRunning { child.signal(SIGKILL) }
        }
    }

    /// Starts a server on a free loopback port with a fresh data directory.
    /// - Throws: ``NATSServerProcessError`` when nats-server is missing or exits before it is ready.
    public static func start(jetStream: Bool = true, port: Int? = nil, arguments: [String] = []) async throws -> NATSServerProcess {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-nats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // A free port can be taken by another test between our check and the server's bind: then
        // another free port (the caller's own port is tried once).
        var attempt = 0
        while true {
            attempt += 1
            let server = NATSServerProcess(port: try port ?? freePort(), dataDirectory: directory, jetStream: jetStream, extraArguments: arguments)
            do {
                try await server.launch()
                return server
            } catch let error as NATSServerProcessError
                where port == nil && attempt < 5 && error.message.contains("address already in use") && !error.message.contains("router port") {
                continue
            }
        }
    }

    /// Starts `count` servers of one cluster whose routes listen on free loopback ports;
    /// `arguments(index, routePorts)` gives server `index`'s arguments. A route port taken between
    /// its choice and the server's bind (another test's ephemeral port, seen in the parallel
    /// suite) starts the whole cluster again on new ports.
    public static func startCluster(count: Int, arguments: ([Int], Int) throws -> [String]) async throws -> [NATSServerProcess] {
        var attempt = 0
        while true {
            attempt += 1
            let ports = try (0..<count).map { _ in try freePort() }
            var started: [NATSServerProcess] = []
            do {
                for index in 0..<count { started.append(try await start(arguments: try arguments(ports, index))) }
                return started
            } catch let error as NATSServerProcessError where attempt < 5 && error.message.contains("address already in use") {
                for server in started { await server.stop() }
            }
        }
    }

    /// Stops the server (SIGTERM, or SIGKILL with `crash`) and waits for it to exit; the data
    /// directory stays, so ``restart()`` finds the streams again.
    public func halt(crash: Bool = false) async {
        guard let running = process.withLock({ process -> ChildProcess? in defer { process = nil }; return process }) else { return }
        if running.isRunning {
            running.signal(crash ? SIGKILL : SIGTERM)
            // A frozen server must run again to act on the SIGTERM.
            running.signal(SIGCONT)
        }
        // Bounded: a server that does not act on SIGTERM within the hang guard is killed.
        if await running.finish() == nil {
            running.signal(SIGKILL)
            _ = await running.finish(within: .seconds(60))
        }
        log.withLock { $0 += running.stderr + running.stdout }
    }

    /// Stops the server process without ending it (SIGSTOP): its sockets stay open and nothing
    /// answers, as on a hung machine. ``thaw()`` lets it go on; ``halt(crash:)`` ends it either way.
    public func freeze() {
        process.withLock { child in
            if let child, child.isRunning { child.signal(SIGSTOP) }
        }
    }

    /// Lets a frozen server go on (SIGCONT).
    public func thaw() {
        process.withLock { child in
            if let child, child.isRunning { child.signal(SIGCONT) }
        }
    }

    /// Starts the server again on the same port and data directory.
    public func restart() async throws {
        await halt()
        try await launch()
    }

    /// Stops the server and removes its data directory.
    public func stop() async {
        await halt()
        try? FileManager.default.removeItem(at: dataDirectory)
    }

    /// The full argument list.
    public var arguments: [String] {
        var arguments = ["-a", "127.0.0.1", "-p", String(port)]
        if jetStream { arguments += ["-js", "-sd", dataDirectory.path] }
        return arguments + extraArguments
    }

    private func launch() async throws {
        guard let executable = Self.executable else { throw NATSServerProcessError(message: "nats-server is not installed (apt-get install -y nats-server)") }
        let child = try ChildProcess(URL(fileURLWithPath: executable), arguments)
        process.withLock { $0 = child }
        // nats-server logs to standard error; the wait ends early if it exits first.
        guard await child.waitForStandardError({ $0.contains("Server is ready") }) else {
            await halt()
            throw NATSServerProcessError(message: "nats-server exited before it was ready:\n\(output)")
        }
        let port = self.port
        let answered = await Self.onThread { Self.readsInfo(port: port) }
        guard answered else {
            await halt()
            throw NATSServerProcessError(message: "nats-server said it was ready but did not answer INFO on port \(port):\n\(output)")
        }
    }

    /// A free loopback TCP port: bind port 0, read the port, close.
    public static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw NATSServerProcessError(message: "socket failed: errno \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
        guard bound == 0 else { throw NATSServerProcessError(message: "bind failed: errno \(errno)") }
        let named = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }
        guard named == 0 else { throw NATSServerProcessError(message: "getsockname failed: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Connects (blocking, on the caller's own thread) and reads until `INFO` arrives.
    static func readsInfo(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return false }
        var bytes = [UInt8](repeating: 0, count: 4096)
        var received: [UInt8] = []
        while received.count < 5 {
            let count = recv(descriptor, &bytes, bytes.count, 0)
            guard count > 0 else { return false }
            received += bytes[0..<count]
        }
        return received.starts(with: Array("INFO ".utf8))
    }

    static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: body()) }
        }
    }
}

/// Why a test's nats-server could not be started.
public struct NATSServerProcessError: Error, CustomStringConvertible {
    /// What went wrong, with the server's log.
    public var message: String
    /// The message.
    public var description: String { message }
}
