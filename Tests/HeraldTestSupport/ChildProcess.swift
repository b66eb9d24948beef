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
/// the test targets. Its pipes are read on threads of their own and its exit is learnt from
/// `waitid` as well as Foundation, so a waiting test never blocks the cooperative pool nor
/// misses an exit under load; the waits are bounded (a hang guard, never a pace).
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

    /// The Foundation process.
    public let process: Process
    private let out = OutputBuffer()
    private let err = OutputBuffer()
    private let exited = OutputBuffer()
    private let exitStatus = ExitStatus()

    /// Starts `executable` with `arguments` in `directory`, with `environment` (the parent's
    /// unless given) and `input` as its standard input (none unless given).
    public init(_ executable: URL, _ arguments: [String], in directory: URL? = nil, environment: [String: String]? = nil,
                input: Data? = nil) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        if let environment { process.environment = environment }
        let outPipe = Pipe(), errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        let inPipe = input.map { _ in Pipe() }
        process.standardInput = inPipe ?? FileHandle.nullDevice
        self.process = process
        let out = self.out, err = self.err, exited = self.exited
        let exitStatus = self.exitStatus
        // Blocking reads on dedicated threads (never the cooperative pool) until end of file.
        for (handle, buffer) in [(outPipe.fileHandleForReading, out), (errPipe.fileHandleForReading, err)] {
            Thread.detachNewThread {
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    buffer.append(data)
                }
                buffer.close()
            }
        }
        process.terminationHandler = { process in
            let status = process.terminationStatus
            exitStatus.record(status)
            exited.close()
        }
        try process.run()
        if let inPipe, let input {
            try? inPipe.fileHandleForReading.close()
            let writer = inPipe.fileHandleForWriting
            // A blocking write (the child may read slowly) on a thread of its own.
            Thread.detachNewThread {
                try? writer.write(contentsOf: input)
                try? writer.close()
            }
        }
        // The parent's copies of the write ends must close, or the readers never see end of file.
        try? outPipe.fileHandleForWriting.close()
        try? errPipe.fileHandleForWriting.close()
        // Foundation learns of the exit through SIGCHLD, which can be late or lost under load;
        // waitid with WNOWAIT sees the exit without reaping, so Foundation still can.
        let pid = process.processIdentifier
        Thread.detachNewThread {
            var info = siginfo_t()
            guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == 0 else { return }
            let code = info._sifields._sigchld.si_status
            let status = info.si_code == Int32(CLD_EXITED) ? code : 128 + code
            exitStatus.record(status)
            exited.close()
        }
    }

    /// Its standard output so far.
    public var stdout: String { out.text }
    /// Its standard error so far.
    public var stderr: String { err.text }

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
            process.terminate()
            return nil
        }
        // After exit the pipes reach end of file at once, unless another child inherited a
        // write end; then take what arrived.
        _ = await out.waitClosed(within: .seconds(5))
        _ = await err.waitClosed(within: .seconds(5))
        return Finished(status: exitStatus.value ?? -1, stdout: out.text, stderr: err.text)
    }

    /// Sends signal `number` to the child.
    public func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Runs to the end.
    public static func run(_ executable: URL, _ arguments: [String], in directory: URL? = nil, environment: [String: String]? = nil,
                           input: Data? = nil, within limit: Duration = .seconds(300)) async throws -> Finished? {
        try await ChildProcess(executable, arguments, in: directory, environment: environment, input: input).finish(within: limit)
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

/// The first exit status learnt, from Foundation or from waitid.
public final class ExitStatus: Sendable {
    private let storage = SyncLock<Int32?>(nil)

    /// No status yet.
    public init() {}

    /// Keeps `status` unless one was kept already.
    public func record(_ status: Int32) { storage.withLock { $0 = $0 ?? status } }
    /// The status kept, if any.
    public var value: Int32? { storage.withLock { $0 } }
}
