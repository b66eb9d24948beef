import Foundation

extension HTTPTransport {
    /// Sends `request` and requires a 2xx answer.
    ///
    /// Any error that is not already a ``ServiceError`` becomes a `.transport` one, so clients
    /// throw only ``ServiceError``.
    func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        try ResponseValidation.requireSuccess(try await exchange(request))
    }

    /// Sends `request` and returns whatever the server answered; only the failure to get an
    /// answer throws, always as a ``ServiceError`` (cancellation as `.cancelled`, anything that is
    /// not already a ``ServiceError`` as `.transport`).
    func exchange(_ request: HTTPRequest) async throws -> HTTPResponse {
        do {
            return try await send(request)
        } catch let error as ServiceError {
            throw error
        } catch is CancellationError {
            throw ServiceError.cancelled
        } catch {
            throw ServiceError.transport(String(describing: error))
        }
    }
}
