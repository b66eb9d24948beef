import HeraldSync

/// The token of a request, handed from the code that sends it to its cancellation handler,
/// which may run first (then it finds nothing, and the request ends at its deadline).
final class TokenBox: Sendable {
    private let token = SyncLock<String?>(nil)

    func set(_ value: String) { token.withLock { $0 = value } }

    func take() -> String? { token.withLock { value in defer { value = nil }; return value } }
}
