#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a ``FileSink`` could not archive an event, open, rotate or sync its file.
///
/// Thrown by the sink's handler, so the bus publishes it as a `bus.subscriber.failed` event;
/// the sink leaves no partial line behind and tries again with the next event.
public struct FileSinkError: Error, Hashable, Sendable, CustomStringConvertible {
    enum Code: Hashable, Sendable {
        case createDirectory
        case open
        case write
        case shortWrite(written: Int, expected: Int)
        case sync
        case rotate
        case repair
        case rename
        case encode(String)
        case alreadyRunning
    }

    let code: Code
    /// The file (or directory) the operation was on.
    public let path: String
    /// The system error number, when the failure came from a system call (0 otherwise).
    public let errorNumber: Int32

    init(_ code: Code, path: String, errorNumber: Int32 = 0) {
        self.code = code
        self.path = path
        self.errorNumber = errorNumber
    }

    static func system(_ code: Code, path: String) -> FileSinkError {
        FileSinkError(code, path: path, errorNumber: errno)
    }

    /// One line naming the operation, the path and the system's reason.
    public var description: String {
        let what: String
        switch code {
        case .createDirectory: what = "cannot create the directory"
        case .open: what = "cannot open"
        case .write: what = "cannot write to"
        case .shortWrite(let written, let expected):
            what = "short write (\(written) of \(expected) bytes, rolled back) to"
        case .sync: what = "cannot sync"
        case .rotate: what = "cannot rotate"
        case .repair: what = "cannot repair the torn last line of"
        case .rename: what = "cannot replace"
        case .encode(let reason): return "file sink: cannot encode the event for \(path): \(reason)"
        case .alreadyRunning: return "file sink: \(path) is archived by a run of this sink already; a sink runs once at a time"
        }
        guard errorNumber != 0 else { return "file sink: \(what) \(path)" }
        return "file sink: \(what) \(path): \(systemReason)"
    }

    /// The system's reason (`No space left on device (errno 28)`), or what failed when no
    /// system call did; without the path.
    var reason: String {
        guard errorNumber == 0 else { return systemReason }
        switch code {
        case .shortWrite(let written, let expected): return "short write (\(written) of \(expected) bytes, rolled back)"
        case .encode(let reason): return reason
        case .alreadyRunning: return "already running"
        default: return "failed"
        }
    }

    private var systemReason: String {
        let reason = strerror(errorNumber).map { String(cString: $0) } ?? "error"
        return "\(reason) (errno \(errorNumber))"
    }
}
