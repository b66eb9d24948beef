import HeraldLifecycle

extension DaemonStopping {
    /// The daemon's words for a group's reason to stop.
    init(_ reason: ServiceGroup.StopReason) {
        switch reason {
        case .signal(let signal): self = .signal(signal.rawValue)
        case .timeElapsed: self = .timeElapsed
        case .cancelled, .gracefulShutdown: self = .cancelled
        case .serviceFailed(let name): self = .failed(name)
        }
    }
}
