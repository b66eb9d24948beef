import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Threads of Herald's own, named from inside so the name sticks.
public enum NamedThread {
    /// Starts a detached thread that takes `name` and then runs `body`.
    ///
    /// The thread names itself first thing. On Linux, Foundation's `Thread.name` set before
    /// `start()` is dropped, and set from the new thread it is dropped too whenever the thread
    /// runs before its creator has recorded its handle (seen under load: an I/O thread kept the
    /// pool thread's name it was born with, `com.apple.root.default-qos`).
    public static func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            nameCurrent(name)
            body()
        }
        thread.start()
    }

    /// Names the calling thread: what a debugger, `/proc/<pid>/task/*/comm`, `strace` and `perf`
    /// show. Linux keeps the first 15 bytes (cut at a character boundary here).
    public static func nameCurrent(_ name: String) {
        #if canImport(Glibc)
        var bytes = 0
        var cut = ""
        for character in name {
            let size = String(character).utf8.count
            guard bytes + size <= 15 else { break }
            bytes += size
            cut.append(character)
        }
        // Glibc's header declares it only under _GNU_SOURCE, which Swift's Glibc module lacks.
        if let setName = setThreadName { _ = cut.withCString { setName(pthread_self(), $0) } }
        #elseif canImport(Darwin)
        _ = pthread_setname_np(name)
        #endif
    }

    #if canImport(Glibc)
    private typealias SetName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
    private static let setThreadName: SetName? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_setname_np")
        .map { unsafeBitCast($0, to: SetName.self) }
    #endif
}
