import Foundation
import HeraldRuntime
import Synchronization
import HeraldSync

/// Upload progress on standard error: a bar redrawn in place on a terminal, one plain line per
/// step otherwise (logs, pipes, CI).
final class ProgressBar: Sendable {
    private let onTerminal: Bool
    private let drawn = SyncLock(false)

    init(onTerminal: Bool) {
        self.onTerminal = onTerminal
    }

    func show(_ progress: SinglePost.Progress) {
        let percent = progress.totalBytes > 0 ? progress.bytesSent * 100 / progress.totalBytes : 0
        let bytes = "\(Self.size(progress.bytesSent))/\(Self.size(progress.totalBytes))"
        let detail = switch progress.phase {
        case .processing: "processing" + (progress.processingPercent.map { " \($0)%" } ?? "")
        default: progress.phase.rawValue
        }
        guard onTerminal else {
            Terminal.err("upload: \(detail) \(bytes) (\(percent)%)")
            return
        }
        let width = 30
        let filled = min(width, percent * width / 100)
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        drawn.withLock { $0 = true }
        FileHandle.standardError.write(Data("\r\u{1B}[2K[\(bar)] \(percent)% \(bytes) \(detail)".utf8))
    }

    /// Ends the bar's line, if one was drawn.
    func finish() {
        if drawn.withLock({ $0 }) { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    static func size(_ bytes: Int) -> String {
        if bytes >= 1_048_576 { return String(format: "%.1f MB", Double(bytes) / 1_048_576) }
        if bytes >= 1024 { return String(format: "%.1f kB", Double(bytes) / 1024) }
        return "\(bytes) B"
    }
}
