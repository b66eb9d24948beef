import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's resident memory, CPU time and open descriptors, read from `/proc/self` as
/// Prometheus' client libraries do (`process_resident_memory_bytes`, `process_cpu_seconds_total`,
/// `process_open_fds`).
///
/// Reading is file I/O: do it on a thread of its own (the status endpoint's connection threads
/// do), never on the cooperative pool. Nil where `/proc` is missing (not Linux).
public struct ProcessStatistics: Sendable, Hashable, Codable {
    /// Resident set size, in bytes.
    public var residentMemoryBytes: Int
    /// User and system CPU time, in seconds.
    public var cpuSeconds: Double
    /// Open file descriptors.
    public var openFileDescriptors: Int
    /// The soft limit on open file descriptors.
    public var maxFileDescriptors: Int?
    /// When the process started, as a Unix time.
    public var startTimeSeconds: Double?

    /// A value from its parts (tests).
    public init(residentMemoryBytes: Int, cpuSeconds: Double, openFileDescriptors: Int, maxFileDescriptors: Int? = nil,
                startTimeSeconds: Double? = nil) {
        self.residentMemoryBytes = residentMemoryBytes
        self.cpuSeconds = cpuSeconds
        self.openFileDescriptors = openFileDescriptors
        self.maxFileDescriptors = maxFileDescriptors
        self.startTimeSeconds = startTimeSeconds
    }

    /// This process, now.
    public static func current() -> ProcessStatistics? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let fields = parseStat(stat),
              let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        else { return nil }
        let ticks = Double(max(1, sysconf(Int32(_SC_CLK_TCK))))
        let page = Int(max(1, sysconf(Int32(_SC_PAGESIZE))))
        var limit = rlimit()
        #if canImport(Glibc)
        let limited = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0
        #else
        let limited = getrlimit(RLIMIT_NOFILE, &limit) == 0
        #endif
        var start: Double?
        if let boot = bootTime() { start = boot + Double(fields.startTicks) / ticks }
        // The listing itself holds one descriptor open while it reads the directory.
        return ProcessStatistics(
            residentMemoryBytes: fields.residentPages * page, cpuSeconds: Double(fields.userTicks + fields.systemTicks) / ticks,
            openFileDescriptors: max(0, descriptors.count - 1), maxFileDescriptors: limited ? Int(clamping: limit.rlim_cur) : nil,
            startTimeSeconds: start)
    }

    /// Fields 14 and 15 (utime, stime), 22 (starttime) and 24 (rss) of `/proc/<pid>/stat`.
    /// The command name (field 2) is in parentheses and may hold spaces and parentheses, so
    /// fields are counted from the last `)`.
    static func parseStat(_ text: String) -> (userTicks: Int, systemTicks: Int, startTicks: Int, residentPages: Int)? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        // After ")": field 3 (state) is the first.
        let fields = text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        func field(_ number: Int) -> Int? {
            let index = number - 3
            return fields.indices.contains(index) ? Int(fields[index]) : nil
        }
        guard let user = field(14), let system = field(15), let start = field(22), let rss = field(24) else { return nil }
        return (user, system, start, rss)
    }

    private static func bootTime() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}
