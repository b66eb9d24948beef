/// A service whose ``run()`` is a closure: the way a type that runs with an argument (a
/// subscriber's `run(on: bus)`) becomes a member of a ``ServiceGroup``.
///
/// ```swift
/// ServiceGroup([.init("archive", ClosureService { try await sink.run(on: bus) })], clock: ContinuousClock())
/// ```
public struct ClosureService: Service {
    private let body: @Sendable () async throws -> Void

    /// - Parameter body: the service's work, with the obligations of ``Service/run()``.
    public init(_ body: @escaping @Sendable () async throws -> Void) {
        self.body = body
    }

    /// Runs the closure.
    public func run() async throws {
        try await body()
    }
}
