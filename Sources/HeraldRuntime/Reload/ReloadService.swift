import HeraldLifecycle
import HeraldStatus

/// The daemon's reloads as a service, last of its group: once every part runs, SIGHUP (when
/// trapped) and `POST /-/reload` reach the ``ReloadQueue``; when the group stops, it stops first,
/// waiting for a reload in progress to end, so the parts are never changed while they stop.
final class ReloadService: Service {
    private let queue: ReloadQueue
    private let signals: UnixSignalsSequence?
    private let sources: StatusSources

    init(queue: ReloadQueue, signals: UnixSignalsSequence?, sources: StatusSources) {
        self.queue = queue
        self.signals = signals
        self.sources = sources
    }

    func run() async throws {
        let queue = queue
        sources.setReloader { await queue.request() }
        announceStarted()
        if let signals {
            try? await cancelWhenGracefulShutdown {
                for await _ in signals { queue.trigger() }
            }
        } else {
            try? await gracefulShutdown()
        }
        sources.setReloader(nil)
        await queue.close()
    }
}
