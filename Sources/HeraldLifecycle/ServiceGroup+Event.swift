extension ServiceGroup {
    /// What a group tells its observer, in order: ``started`` (unless it stopped while starting),
    /// then one ``stopping(_:)``, perhaps then ``stoppingAtOnce(_:)``.
    public enum Event: Sendable, Hashable {
        /// Every service announced that it started.
        case started
        /// The group begins to stop its services, in reverse order, and why.
        case stopping(StopReason)
        /// A stop signal came again while stopping (and not with the first one): the group
        /// cancels every service instead of letting them drain.
        case stoppingAtOnce(UnixSignal)
    }

    /// Why a group stops.
    public enum StopReason: Sendable, Hashable {
        /// One of its stop signals came.
        case signal(UnixSignal)
        /// Its run duration passed.
        case timeElapsed
        /// The task running the group was cancelled.
        case cancelled
        /// The group, itself a service, was asked to shut down gracefully.
        case gracefulShutdown
        /// The named service threw, or ended before it was asked to.
        case serviceFailed(String)
    }
}
