import Foundation

/// Runs CPU-heavy test work on a thread of its own and returns its result.
///
/// Swift Testing runs tests on the cooperative pool, which has as many threads as cores (two
/// here). A synchronous test that computes for long (seconds under the thread sanitizer) holds
/// one of them, and two such tests stall every asynchronous test in the process. Return the
/// values to check and `#expect` them in the test itself: expectations belong to the test's task.
public func onDedicatedThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        Thread.detachNewThread {
            continuation.resume(with: Result { try body() })
        }
    }
}
