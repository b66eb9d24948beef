import Foundation

extension SinglePost {
    /// ``post(_:media:inReplyTo:progress:stage:)`` as the only service of a `ServiceGroup` that stops on
    /// SIGINT and SIGTERM (with `stopOnSignals`): a signal cancels the post (the request in flight
    /// stops) and the error then says it was cancelled, while the last ``Stage`` reported tells
    /// what had been done.
    ///
    /// - Parameter stopping: told when a signal came (``DaemonStopping/signal(_:)``), and when it
    ///   came again over a second later (``DaemonStopping/signalAgain(_:)``: the host may exit at
    ///   once).
    /// - Throws: ``DaemonError`` with the service's or the validation's reason.
    public func post(_ text: String, media: Data? = nil, inReplyTo: String? = nil, stopOnSignals: Bool,
                     progress: @escaping @Sendable (Progress) -> Void = { _ in },
                     stage: @escaping @Sendable (Stage) -> Void = { _ in },
                     stopping: @escaping @Sendable (DaemonStopping) -> Void) async throws(DaemonError) -> Posted {
        do {
            return try await SignalledCommand.run("post", stopOnSignals: stopOnSignals, stopping: stopping) {
                try await post(text, media: media, inReplyTo: inReplyTo, progress: progress, stage: stage)
            }
        } catch let error as DaemonError {
            throw error
        } catch {
            throw DaemonError("\(error)")
        }
    }
}
