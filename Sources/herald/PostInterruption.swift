import HeraldSync
import HeraldRuntime
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `herald post` knows when a signal stops it: which signal came, and how far the post had
/// gone, so the one line it prints says what is true.
final class PostInterruption: Sendable {
    private let state = SyncLock<(signal: Int32?, stage: SinglePost.Stage?)>((nil, nil))

    /// Remembers the first signal.
    func signalled(_ number: Int32) {
        state.withLock { if $0.signal == nil { $0.signal = number } }
    }

    /// Remembers the post's latest stage.
    func reached(_ stage: SinglePost.Stage) {
        state.withLock { $0.stage = stage }
    }

    /// The signal that came, if any.
    var signal: Int32? { state.withLock { $0.signal } }

    /// The exit status for a signal: 128 + its number (130 for SIGINT, 143 for SIGTERM), as a
    /// shell reports a command killed by it.
    static func exitStatus(for signal: Int32) -> Int32 { 128 + signal }

    /// `herald: post interrupted by SIGINT; nothing was posted`, or what else is true.
    var message: String {
        let (signal, stage) = state.withLock { ($0.signal, $0.stage) }
        let name = switch signal {
        case SIGINT?: "SIGINT"
        case SIGTERM?: "SIGTERM"
        case let other?: "signal \(other)"
        case nil: "a signal"
        }
        let outcome = switch stage {
        case nil, .uploadingMedia?:
            "nothing was posted"
        case .mediaUploaded(let id)?:
            "the video was uploaded (media \(id)) but no status was posted"
        case .sendingStatus?:
            "the status was sent without an answer, so it may have been posted (check the timeline)"
        }
        return "herald: post interrupted by \(name); \(outcome)"
    }
}
