/// A long-running part of a program, run by a ``ServiceGroup``.
///
/// ``run()`` does the part's work until it is asked to stop, then drains and returns:
/// - it calls ``announceStarted()`` once it is ready to be relied on (a socket bound, a
///   subscription made); the group starts the next service only then, so a service may use
///   what the ones before it offer;
/// - it ends when its task is cancelled, or, without cancellation, when the group asks it to
///   shut down gracefully (see ``gracefulShutdown()``, ``withGracefulShutdownHandler(isolation:operation:onGracefulShutdown:)``
///   and ``cancelWhenGracefulShutdown(_:)``); graceful shutdown lets it finish what it holds first;
/// - an error it throws stops the group, which reports it in a ``ServiceGroupError`` naming the
///   service. Returning before it was asked to stop is a failure too.
///
/// A service that never announces itself holds back the services after it until it ends.
public protocol Service: Sendable {
    /// Runs the part until cancellation or graceful shutdown, then drains and returns.
    func run() async throws
}
