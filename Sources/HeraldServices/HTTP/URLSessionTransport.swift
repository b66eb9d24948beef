import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The ``HTTPTransport`` over `URLSession`; the only place in the module that touches it.
///
/// No longer the daemon's: ``SchemeRoutingTransport`` sends `https` through
/// ``SocketHTTPTransport`` too. On Linux, `URLSession` (libcurl under swift-corelibs-foundation)
/// keeps a write source armed on a connection that waits for its answer and spins on it: a
/// slow answer costs most of a core for as long as it takes. Kept for callers that want
/// `URLSession`'s behaviour (and as the baseline the tests compare with).
///
/// Each request gets a whole-exchange deadline (``HTTPRequest/timeout`` or the default given
/// here) enforced by cancelling the data task, so a slow-drip body cannot stall a caller.
/// Cancelling the calling task cancels the data task.
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    /// For requests with ``HTTPRequest/followsRedirects`` off: its delegate refuses every
    /// redirect, so the 3xx answer itself comes back, as from the other transports.
    private let unredirectedSession: URLSession
    private let defaultTimeout: Duration

    /// Creates a transport over a fresh ephemeral session (no cookies, no cache).
    public init(defaultTimeout: Duration = .seconds(30)) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        self.session = URLSession(configuration: configuration)
        self.unredirectedSession = URLSession(configuration: configuration, delegate: RedirectRefusal(), delegateQueue: nil)
        self.defaultTimeout = defaultTimeout
    }

    deinit {
        session.finishTasksAndInvalidate()
        unredirectedSession.finishTasksAndInvalidate()
    }

    /// Sends `request`; throws `.transport`, `.timeout` or `.cancelled`.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let timeout = request.timeout ?? defaultTimeout
        var urlRequest = URLRequest(
            url: request.url, cachePolicy: .reloadIgnoringLocalCacheData,
            timeoutInterval: timeout.timeInterval)
        urlRequest.httpMethod = request.method
        for field in request.headers {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        urlRequest.httpBody = request.body
        if Task.isCancelled { throw ServiceError.cancelled }

        let exchange = DataTaskExchange()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, Error>) in
                let task = (request.followsRedirects ? session : unredirectedSession).dataTask(with: urlRequest) { data, response, error in
                    continuation.resume(with: exchange.result(data: data, response: response, error: error, timeout: timeout))
                }
                exchange.start(task, timeout: timeout)
            }
        } onCancel: {
            exchange.cancel(reason: .cancelled)
        }
    }
}

/// Answers every redirect with "do not follow", so the data task completes with the 3xx.
///
/// `@unchecked Sendable` is safe: it has no state.
private final class RedirectRefusal: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
