/// A service made when it starts, from what the services started before it offer (the embedded
/// sandbox's address, say).
///
/// An error thrown while making it fails the service like one thrown by its `run()`.
public struct DeferredService: Service {
    private let make: @Sendable () async throws -> any Service

    /// - Parameter make: builds the service; called once, when the group starts it.
    public init(_ make: @escaping @Sendable () async throws -> any Service) {
        self.make = make
    }

    /// Makes the service and runs it.
    public func run() async throws {
        try await make().run()
    }
}
