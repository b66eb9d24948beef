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
enum BuiltProducts {
    /// The directory of the products: the test runner's directory, or its parent on platforms
    /// where the runner sits inside a bundle.
    static func url(of product: String) -> URL? {
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
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
}

/// A child process with its standard output and error collected.
final class ChildProcess: Sendable {
    struct Finished: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    let process: Process
    private let out = OutputBuffer()
    private let err = OutputBuffer()
    private let exited = OutputBuffer()
    private let exitStatus = ExitStatus()

    /// Starts `executable` with `arguments` in `directory`.
    init(_ executable: URL, _ arguments: [String], in directory: URL? = nil, environment: [String: String]? = nil) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        if let environment { process.environment = environment }
        let outPipe = Pipe(), errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = FileHandle.nullDevice
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

    var stdout: String { out.text }
    var stderr: String { err.text }

    /// Whether the process has not exited yet (stopped or not).
    public var isRunning: Bool { exitStatus.value == nil }

    /// Waits (bounded) until `condition` holds on standard error.
    func waitForStandardError(within limit: Duration = .seconds(300), _ condition: @escaping @Sendable (String) -> Bool) async -> Bool {
        await err.wait(within: limit, condition)
    }

    /// Waits (bounded) until `condition` holds on standard output.
    func waitForStandardOutput(within limit: Duration = .seconds(300), _ condition: @escaping @Sendable (String) -> Bool) async -> Bool {
        await out.wait(within: limit, condition)
    }

    /// Waits (bounded) for the process to exit and its output to be read.
    func finish(within limit: Duration = .seconds(300)) async -> Finished? {
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

    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Runs to the end.
    static func run(_ executable: URL, _ arguments: [String], in directory: URL? = nil,
                    within limit: Duration = .seconds(300)) async throws -> Finished? {
        try await ChildProcess(executable, arguments, in: directory).finish(within: limit)
    }
}

/// Bytes from a pipe, and waiters woken whenever more arrive or the pipe closes.
final class OutputBuffer: Sendable {
    private struct State {
        var data = Data()
        var closed = false
        var version = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = SyncLock(State())

    var text: String { state.withLock { String(decoding: $0.data, as: UTF8.self) } }

    func append(_ chunk: Data) {
        let waiters = state.withLock { state in
            state.data.append(chunk)
            state.version += 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        waiters.forEach { $0.resume() }
    }

    func close() {
        let waiters = state.withLock { state in
            state.closed = true
            state.version += 1
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        waiters.forEach { $0.resume() }
    }

    func waitClosed(within limit: Duration) async -> Bool {
        await wait(within: limit) { [self] _ in state.withLock { $0.closed } }
    }

    /// Waits until `condition(text)` holds, the buffer closes without it holding, or `limit` passes.
    func wait(within limit: Duration, _ condition: @escaping @Sendable (String) -> Bool) async -> Bool {
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
final class ExitStatus: Sendable {
    private let storage = SyncLock<Int32?>(nil)

    func record(_ status: Int32) { storage.withLock { $0 = $0 ?? status } }
    var value: Int32? { storage.withLock { $0 } }
}
