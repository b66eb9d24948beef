import HeraldSync
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds built executables next to the test bundle (`.build/<triple>/debug/`) and runs them as
/// child processes, collecting their output without sleeping.
public enum BuiltProducts {
    /// The directory of the products: the test runner's directory, or its parent on platforms
    /// where the runner sits inside a bundle.
    public static func url(of product: String) -> URL? {
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var candidates = [runner, runner.deletingLastPathComponent(), runner.deletingLastPathComponent().deletingLastPathComponent()]
        // Fallback when the runner is elsewhere: <package>/.build/debug next to this file's package.
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(package.appendingPathComponent(".build/debug"))
        for directory in candidates {
            let url = directory.appendingPathComponent(product)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    /// The package root (where `config.json` lives).
    public static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
}

/// A child process with its standard output and error collected: the one process runner of
/// the test targets.
///
/// Started with `posix_spawn` rather than Foundation's `Process` (whose `run()` crashed the test
/// process once under load, and whose children inherited the runner's blocked signals): the
/// child gets every signal at its default and none blocked, as from a shell, and no descriptor
/// of the test process but its three standard ones. Its pipes are read on threads of their own
/// and its exit is learnt from `waitid` on another, so a waiting test never blocks the
/// cooperative pool; the waits are bounded (a hang guard, never a pace).
public final class ChildProcess: Sendable {
    /// How a child ended.
    public struct Finished: Sendable {
        /// Its exit status (128 + the signal when a signal ended it).
        public var status: Int32
        /// Its standard output.
        public var stdout: String
        /// Its standard error.
        public var stderr: String
    }

    /// Its process id.
    public let pid: pid_t
    private let out = OutputBuffer()
    private let err = OutputBuffer()
    private let exited = OutputBuffer()
    private let exitStatus = ExitStatus()

    /// Why a child could not be started.
    public struct SpawnError: Error, CustomStringConvertible {
        /// The executable.
        public var path: String
        /// What failed.
        public var call: String
        /// The error number.
        public var code: Int32

        public var description: String { "cannot start \(path): \(call): \(String(cString: strerror(code)))" }
    }

    /// Starts `executable` with `arguments` in `directory`, with `environment` (the parent's
    /// unless given) and `input` as its standard input (none unless given).
    public init(_ executable: URL, _ arguments: [String], in directory: URL? = nil, environment: [String: String]? = nil,
                input: Data? = nil) throws {
        let path = executable.path
        func check(_ call: String, _ result: Int32) throws {
            if result != 0 { throw SpawnError(path: path, call: call, code: result == -1 ? errno : result) }
        }
        var outFDs: [Int32] = [-1, -1], errFDs: [Int32] = [-1, -1], inFDs: [Int32] = [-1, -1]
        try check("pipe", SpawnShims.pipe(&outFDs))
        try check("pipe", SpawnShims.pipe(&errFDs))
        if input != nil {
            try check("pipe", SpawnShims.pipe(&inFDs))
        } else {
            inFDs[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)
            try check("open /dev/null", inFDs[0] < 0 ? -1 : 0)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        try check("dup2 stdin", posix_spawn_file_actions_adddup2(&actions, inFDs[0], 0))
        try check("dup2 stdout", posix_spawn_file_actions_adddup2(&actions, outFDs[1], 1))
        try check("dup2 stderr", posix_spawn_file_actions_adddup2(&actions, errFDs[1], 2))
        if let directory { try check("chdir", SpawnShims.addChdir(&actions, directory.path)) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        try check("sigmask", posix_spawnattr_setsigmask(&attributes, &none))
        try check("sigdefault", posix_spawnattr_setsigdefault(&attributes, &all))
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        #if canImport(Glibc)
        // Descriptors the test process opened without close-on-exec stay out of the child.
        try check("closefrom", SpawnShims.addCloseFrom(&actions, 3))
        #elseif canImport(Darwin)
        flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #endif
        try check("flags", posix_spawnattr_setflags(&attributes, Int16(flags)))
        let environment = environment ?? ProcessInfo.processInfo.environment
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var spawnedPID: pid_t = 0
        let spawned = posix_spawn(&spawnedPID, path, &actions, &attributes, argv, envp)
        let pid = spawnedPID
        // The parent's copies of the child's ends close, or the readers never see end of file.
        close(outFDs[1])
        close(errFDs[1])
        close(inFDs[0])
        guard spawned == 0 else {
            close(outFDs[0])
            close(errFDs[0])
            if input != nil { close(inFDs[1]) }
            throw SpawnError(path: path, call: "posix_spawn", code: spawned)
        }
        self.pid = pid
        let exited = self.exited, exitStatus = self.exitStatus
        // Blocking reads on dedicated threads (never the cooperative pool) until end of file.
        for (fd, buffer) in [(outFDs[0], out), (errFDs[0], err)] {
            Thread.detachNewThread {
                var chunk = [UInt8](repeating: 0, count: 65536)
                while true {
                    let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { break }
                    buffer.append(Data(chunk[0..<count]))
                }
                close(fd)
                buffer.close()
            }
        }
        if let input {
            let fd = inFDs[1]
            // A blocking write (the child may read slowly) on a thread of its own.
            Thread.detachNewThread {
                input.withUnsafeBytes { bytes in
                    var offset = 0
                    while offset < bytes.count {
                        let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                        if written < 0 && errno == EINTR { continue }
                        if written <= 0 { break }
                        offset += written
                    }
                }
                close(fd)
            }
        }
        // The exit, reaped here (nothing else waits for this child).
        Thread.detachNewThread {
            var info = siginfo_t()
            var result: Int32
            repeat { result = waitid(P_PID, id_t(pid), &info, WEXITED) } while result != 0 && errno == EINTR
            guard result == 0 else {
                exitStatus.record(-1)
                exited.close()
                return
            }
            #if canImport(Glibc)
            let code = info._sifields._sigchld.si_status
            #else
            let code = info.si_status
            #endif
            exitStatus.record(info.si_code == Int32(CLD_EXITED) ? code : 128 + code)
            exited.close()
        }
    }

    /// Its standard output so far.
    public var stdout: String { out.text }
    /// Its standard error so far.
    public var stderr: String { err.text }

    /// Whether it has not exited yet (as far as its waiting thread knows).
    public var isRunning: Bool { exitStatus.value == nil }

    /// Waits (bounded) until `condition` holds on standard error.
    public func waitForStandardError(within limit: Duration = .seconds(300), _ condition: @escaping @Sendable (String) -> Bool) async -> Bool {
        await err.wait(within: limit, condition)
    }

    /// Waits (bounded) until `condition` holds on standard output.
    public func waitForStandardOutput(within limit: Duration = .seconds(300), _ condition: @escaping @Sendable (String) -> Bool) async -> Bool {
        await out.wait(within: limit, condition)
    }

    /// Waits (bounded) for the process to exit and its output to be read.
    public func finish(within limit: Duration = .seconds(300)) async -> Finished? {
        guard await exited.waitClosed(within: limit) else {
            terminate()
            return nil
        }
        // After exit the pipes reach end of file at once, unless a grandchild kept a write end;
        // then take what arrived.
        _ = await out.waitClosed(within: .seconds(5))
        _ = await err.waitClosed(within: .seconds(5))
        return Finished(status: exitStatus.value ?? -1, stdout: out.text, stderr: err.text)
    }

    /// Sends signal `number` to the child, while it runs.
    public func signal(_ number: Int32) {
        if isRunning { kill(pid, number) }
    }

    /// Sends SIGTERM to the child, while it runs.
    public func terminate() {
        signal(SIGTERM)
    }

    /// Runs to the end.
    public static func run(_ executable: URL, _ arguments: [String], in directory: URL? = nil, environment: [String: String]? = nil,
                           input: Data? = nil, within limit: Duration = .seconds(300)) async throws -> Finished? {
        try await ChildProcess(executable, arguments, in: directory, environment: environment, input: input).finish(within: limit)
    }
}

/// The GNU extensions `posix_spawn` needs here, which the Glibc module does not declare
/// (they sit behind `_GNU_SOURCE`): looked up in the C library at run time.
enum SpawnShims {
    #if canImport(Glibc)
    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    private static func symbol<T>(_ name: String, as type: T.Type) -> T? {
        guard let handle = dlopen(nil, RTLD_NOW), let address = dlsym(handle, name) else { return nil }
        return unsafeBitCast(address, to: type)
    }

    private static let pipe2 = symbol("pipe2", as: Pipe2.self)
    private static let addchdir = symbol("posix_spawn_file_actions_addchdir_np", as: AddChdir.self)
    private static let addclosefrom = symbol("posix_spawn_file_actions_addclosefrom_np", as: AddCloseFrom.self)
    #endif

    /// A pipe whose two ends close on exec (atomically where `pipe2` exists).
    static func pipe(_ fds: UnsafeMutablePointer<Int32>) -> Int32 {
        #if canImport(Glibc)
        if let pipe2 { return pipe2(fds, O_CLOEXEC) }
        #endif
        #if canImport(Glibc)
        guard Glibc.pipe(fds) == 0 else { return -1 }
        #else
        guard Darwin.pipe(fds) == 0 else { return -1 }
        #endif
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        return 0
    }

    /// The child changes to `path` before it runs.
    static func addChdir(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: String) -> Int32 {
        #if canImport(Glibc)
        guard let addchdir else { return ENOSYS }
        return addchdir(actions, path)
        #else
        return posix_spawn_file_actions_addchdir_np(actions, path)
        #endif
    }

    /// The child closes every descriptor from `lowest` up (glibc 2.34 and later).
    static func addCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ lowest: Int32) -> Int32 {
        #if canImport(Glibc)
        guard let addclosefrom else { return 0 }  // older C library: descriptors opened with close-on-exec only
        return addclosefrom(actions, lowest)
        #else
        return 0
        #endif
    }
}

/// Bytes from a pipe, and waiters woken whenever more arrive or the pipe closes.
public final class OutputBuffer: Sendable {
    private struct State {
        var data = Data()
        var closed = false
        var version = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = SyncLock(State())

    /// An empty buffer.
    public init() {}

    /// The bytes so far, as UTF-8 text.
    public var text: String { state.withLock { String(decoding: $0.data, as: UTF8.self) } }

    /// Adds bytes and wakes the waiters.
    public func append(_ chunk: Data) {
        let waiters = state.withLock { state in
            state.data.append(chunk)
            state.version += 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        waiters.forEach { $0.resume() }
    }

    /// Marks the end and wakes the waiters.
    public func close() {
        let waiters = state.withLock { state in
            state.closed = true
            state.version += 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        waiters.forEach { $0.resume() }
    }

    /// Waits (bounded) for the end; whether it came.
    public func waitClosed(within limit: Duration) async -> Bool {
        await wait(within: limit) { [self] _ in state.withLock { $0.closed } }
    }

    /// Waits until `condition(text)` holds, the buffer closes without it holding, or `limit` passes.
    public func wait(within limit: Duration, _ condition: @escaping @Sendable (String) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while true {
            let seen = state.withLock { $0.version }
            if condition(text) { return true }
            if ContinuousClock.now >= deadline || (state.withLock { $0.closed } && !condition(text)) {
                return condition(text)
            }
            await waitForChange(after: seen, until: deadline)
        }
    }

    /// Suspends until the next append or close, or the deadline (a bound, not a pacing sleep).
    private func waitForChange(after seen: Int, until deadline: ContinuousClock.Instant) async {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = self.state.withLock { state -> Bool in
                if state.closed || state.version != seen { return true }
                state.waiters[id] = continuation
                return false
            }
            if ready {
                continuation.resume()
                return
            }
            // The bound: wake the waiter at the deadline if nothing arrived by then.
            let (seconds, attoseconds) = (deadline - ContinuousClock.now).components
            let delay = max(0, Double(seconds) + Double(attoseconds) / 1e18)
            DispatchQueue.global().asyncAfter(deadline: .now() + delay) {
                let waiter = self.state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.resume()
            }
        }
    }
}

/// The first exit status learnt.
public final class ExitStatus: Sendable {
    private let storage = SyncLock<Int32?>(nil)

    /// No status yet.
    public init() {}

    /// Keeps `status` unless one was kept already.
    public func record(_ status: Int32) { storage.withLock { $0 = $0 ?? status } }
    /// The status kept, if any.
    public var value: Int32? { storage.withLock { $0 } }
}
