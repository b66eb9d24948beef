#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A non-blocking, close-on-exec pipe that wakes a thread sleeping in `poll(2)`: any thread
/// writes a byte to ``writeEnd`` (never blocking: a full pipe already means "wake up"), the
/// sleeper polls ``readEnd`` beside its socket and drains it.
///
/// A value holding two descriptors: copies share them, and exactly one owner calls ``close()``.
public struct WakePipe: Sendable, Hashable {
    /// The end to poll for input (and to drain).
    public let readEnd: Int32
    /// The end to write a byte to.
    public let writeEnd: Int32

    /// Opens a pipe.
    /// - Throws: ``SystemError`` when the process has no descriptor left.
    public init() throws(SystemError) {
        var ends: [Int32] = [-1, -1]
        // Not pipe2: Glibc's module does not export it. A child spawned between pipe and
        // fcntl inherits two idle descriptors, nothing worse.
        guard pipe(&ends) == 0 else { throw SystemError(operation: "pipe", errno: errno) }
        for end in ends { Platform.configure(end, nonBlocking: true) }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    /// The pipe of these two descriptors (kept by a caller as numbers).
    public init(readEnd: Int32, writeEnd: Int32) {
        self.readEnd = readEnd
        self.writeEnd = writeEnd
    }

    /// Wakes the sleeper (now, or at its next wait). Never blocks.
    public func signal() { Self.signal(writeEnd) }

    /// Reads every byte waiting, so the next wait sleeps until the next ``signal()``.
    public func drain() { Self.drain(readEnd) }

    /// Closes both ends.
    public func close() {
        Platform.close(readEnd)
        Platform.close(writeEnd)
    }

    /// Writes one byte to the write end `descriptor` of a wake pipe.
    public static func signal(_ descriptor: Int32) {
        var byte: UInt8 = 1
        _ = Platform.write(descriptor, &byte, 1)
    }

    /// Reads everything waiting on the read end `descriptor` of a wake pipe.
    public static func drain(_ descriptor: Int32) {
        var bytes = [UInt8](repeating: 0, count: 256)
        while bytes.withUnsafeMutableBytes({ Platform.read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Closes `descriptor` (a pipe's end the caller keeps alone).
    public static func close(_ descriptor: Int32) { Platform.close(descriptor) }
}
