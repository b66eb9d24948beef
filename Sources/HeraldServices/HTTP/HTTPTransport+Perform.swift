import Foundation

extension HTTPTransport {
    /// Sends `request` and requires a 2xx answer.
    ///
    /// Any error that is not already a ``ServiceError`` becomes a `.transport` one, so clients
    /// throw only ``ServiceError``.
    func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try await send(request)
        } catch let error as ServiceError {
            throw error
        } catch is CancellationError {
            throw ServiceError.cancelled
        } catch {
            throw ServiceError.transport(String(describing: error))
        }
        return try ResponseValidation.requireSuccess(response)
    }
}
