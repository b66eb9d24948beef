import Foundation
import HeraldServices

/// The sending of one intent: waiting for quiet hours and the rate, the requests, retries with
/// backoff, rate-limit resets, and what each answer means. Shared by the ``PostScheduler``'s
/// workers and the cluster's post queue, which record the outcome each their own way.
package struct PostAttempts: Sendable {
    /// How the sending ended.
    package enum Outcome: Sendable, Hashable {
        /// Made (`id` the new status's or object's; nil with `duplicate`: the service had it).
        case sent(id: String?, duplicate: Bool, requests: Int)
        /// Given up, and why.
        case failed(reason: String, status: Int?, requests: Int)
        /// Cancelled (stopping) before an outcome: the post may or may not have been made.
        case stopped
    }

    package var retry: PostScheduler.RetryPolicy
    package var clock: any Clock<Duration>
    package var now: @Sendable () -> Date

    package init(retry: PostScheduler.RetryPolicy, clock: any Clock<Duration>, now: @escaping @Sendable () -> Date) {
        self.retry = retry
        self.clock = clock
        self.now = now
    }

    /// Sends `intent` through `service` until an outcome. `mayExist`: an earlier attempt or run
    /// may have made it. `waitBeforeSending` says how long quiet hours or the rate make the next
    /// request wait (nil: send now). `beforeFirstRequest`, when given, runs once, just before
    /// the first request: true when an earlier attempt elsewhere may have made the post, nil to
    /// stop without sending (the cluster marks each attempt in its state bucket there).
    package func send(_ intent: PostIntent, through service: any PostService, mayExist: Bool,
                      waitBeforeSending: () -> Duration?, beforeFirstRequest: (() async -> Bool?)? = nil,
                      progress: @escaping @Sendable (UploadProgress) -> Void) async -> Outcome {
        var mayExist = mayExist
        var requests = 0
        var failures = 0
        var backoff = retry.initial
        while !Task.isCancelled {
            if let wait = waitBeforeSending() {
                guard (try? await clock.sleep(for: wait)) != nil else { return .stopped }
                continue
            }
            if requests == 0, let beforeFirstRequest {
                guard let earlier = await beforeFirstRequest() else { return .stopped }
                if earlier { mayExist = true }
            }
            requests += 1
            do {
                let id = try await service.post(intent, mayExist: mayExist, progress: progress)
                return .sent(id: id, duplicate: false, requests: requests)
            } catch {
                switch PostErrorClass(error) {
                case .cancelled:
                    if Task.isCancelled { return .stopped }  // stopping; otherwise a cancelled request is retried
                    mayExist = true
                    guard (try? await clock.sleep(for: backoff)) != nil else { return .stopped }
                    backoff = min(backoff * 2, retry.maximum)
                case .duplicate where mayExist:
                    // An earlier attempt (or run) made it.
                    return .sent(id: nil, duplicate: true, requests: requests)
                case .duplicate:
                    // A first attempt cannot have been made before: another item rendered the same text.
                    return .failed(reason: "the service already has a status with this text (code 187); a different item posted it",
                                   status: 403, requests: requests)
                case .permanent(let reason, let status):
                    return .failed(reason: reason, status: status, requests: requests)
                case .rateLimited(let reset):
                    // Until the reset, and at least the backoff, which grows: a reset that looks
                    // past (clocks apart) or none at all does not make a tight loop.
                    mayExist = true
                    let wait = max(reset.map { PostScheduler.duration(from: now(), to: $0) } ?? .zero, backoff)
                    guard (try? await clock.sleep(for: min(wait, .seconds(900)))) != nil else { return .stopped }
                    backoff = min(backoff * 2, retry.maximum)
                case .retry(let reason):
                    mayExist = true
                    failures += 1
                    guard failures < retry.attempts else {
                        return .failed(reason: "gave up after \(requests) attempts: \(reason)", status: nil, requests: requests)
                    }
                    guard (try? await clock.sleep(for: backoff)) != nil else { return .stopped }
                    backoff = min(backoff * 2, retry.maximum)
                }
            }
        }
        return .stopped
    }
}
