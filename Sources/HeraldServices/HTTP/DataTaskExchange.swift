import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The state of one `URLSessionDataTask` shared between its completion handler, its deadline
/// timer and the cancellation handler of the calling task.
///
/// `@unchecked Sendable` is safe: every stored property is read and written only while
/// holding `lock`, and the data task itself is thread-safe to `cancel()`.
final class DataTaskExchange: @unchecked Sendable {
    enum StopReason { case cancelled, timedOut }

    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var stopReason: StopReason?
    private var deadline: DispatchWorkItem?

    /// Starts `task` unless the exchange was already cancelled, and arms the deadline.
    func start(_ task: URLSessionDataTask, timeout: Duration) {
        // The deadline is cancelled when the exchange completes, so a finished request leaves
        // no timer armed for the rest of its timeout.
        let deadline = DispatchWorkItem { [weak self] in self?.cancel(reason: .timedOut) }
        lock.lock()
        self.task = task
        self.deadline = deadline
        let alreadyStopped = stopReason != nil
        lock.unlock()
        if alreadyStopped {
            task.cancel()
            return
        }
        task.resume()
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout.timeInterval, execute: deadline)
    }

    /// Stops the exchange; the first reason wins.
    func cancel(reason: StopReason) {
        lock.lock()
        if stopReason == nil { stopReason = reason }
        let task = self.task
        lock.unlock()
        task?.cancel()
    }

    /// Maps the completion handler's arguments to a response or a ``ServiceError``.
    func result(data: Data?, response: URLResponse?, error: Error?, timeout: Duration) -> Result<HTTPResponse, Error> {
        lock.lock()
        let reason = stopReason
        // Once completed, a late deadline must not be reported.
        if reason == nil { stopReason = .cancelled }
        task = nil
        let deadline = self.deadline
        self.deadline = nil
        lock.unlock()
        deadline?.cancel()

        if let error {
            if reason == .timedOut { return .failure(ServiceError.timeout(after: timeout)) }
            if reason == .cancelled { return .failure(ServiceError.cancelled) }
            if let urlError = error as? URLError {
                switch urlError.code {
                case .timedOut: return .failure(ServiceError.timeout(after: timeout))
                case .cancelled: return .failure(ServiceError.cancelled)
                default: break
                }
            }
            let nsError = error as NSError
            return .failure(ServiceError.transport("\(nsError.localizedDescription) (\(nsError.domain) \(nsError.code))"))
        }
        guard let http = response as? HTTPURLResponse else {
            return .failure(ServiceError.transport("the response was not HTTP"))
        }
        var headers = HTTPHeaders()
        for (name, value) in http.allHeaderFields {
            headers.add(name: String(describing: name), value: String(describing: value))
        }
        return .success(HTTPResponse(status: http.statusCode, headers: headers, body: data ?? Data()))
    }
}
