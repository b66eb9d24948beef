/// What an ``HTTPServer`` serves: a response for each request.
///
/// ``respond(to:)`` runs on the connection's own thread (one per connection), never on Swift's
/// cooperative pool, so it may block briefly (read a `/proc` file, take a lock); a long-lived
/// body is an ``HTTPResponseStream``. It is called from many connection threads at once.
public protocol HTTPRequestHandler: Sendable {
    /// The response to `request`.
    func respond(to request: HTTPServerRequest) -> HTTPServerResponse
}

/// A handler made of a closure.
public struct HTTPClosureHandler: HTTPRequestHandler {
    private let handle: @Sendable (HTTPServerRequest) -> HTTPServerResponse

    /// A handler answering with `handle`.
    public init(_ handle: @escaping @Sendable (HTTPServerRequest) -> HTTPServerResponse) {
        self.handle = handle
    }

    /// `handle(request)`.
    public func respond(to request: HTTPServerRequest) -> HTTPServerResponse {
        handle(request)
    }
}
