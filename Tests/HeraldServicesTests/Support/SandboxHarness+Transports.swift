import HeraldSandbox
import HeraldServices
import HeraldTestSupport

extension SandboxHarness {
    /// The harness with the clients on `kind`'s transport, its requests bounded by `timeout`.
    static func run<T>(_ configure: (inout SandboxConfiguration) -> Void = { _ in }, timeout: Duration = .seconds(120),
                       transport kind: TransportKind, _ body: (SandboxHarness) async throws -> T) async throws -> T {
        try await run(configure, transport: kind.make(defaultTimeout: timeout), body)
    }

}

/// Runs `body` and returns the ``ServiceError`` it throws, or nil when it does not throw one.
func serviceError<T>(_ body: () async throws -> T) async -> ServiceError? {
    do {
        _ = try await body()
        return nil
    } catch let error as ServiceError {
        return error
    } catch {
        return nil
    }
}
