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

/// Reads `handle` to its end on a thread of its own, handing each chunk to `body` as it comes
/// and an empty chunk at the end.
///
/// Instead of `FileHandle.readabilityHandler`: on Linux, installing and tearing down that
/// handler's dispatch read source while other tests do the same can crash libdispatch's event
/// loop (swift-corelibs-libdispatch#949; seen here once, under the thread sanitizer). A blocking
/// read on a thread of its own involves no dispatch source and holds no cooperative thread.
public func readToEndOnDedicatedThread(_ handle: FileHandle, _ body: @escaping @Sendable (Data) -> Void) {
    Thread.detachNewThread {
        while true {
            let chunk = handle.availableData
            body(chunk)
            if chunk.isEmpty { return }
        }
    }
}
