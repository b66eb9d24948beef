/// How long the accepting thread waits after accept(2) failed: doubling from 10 ms to 1 s while
/// failures go on, back to the start after a success.
///
/// Out of descriptors (EMFILE, ENFILE) the pending connection stays pending, so retrying at once
/// spins on a CPU; waiting lets connections end and free descriptors.
struct AcceptBackoff: Sendable, Hashable {
    static let shortest: Duration = .milliseconds(10)
    static let longest: Duration = .seconds(1)

    private(set) var next = AcceptBackoff.shortest

    /// The wait after one more failure.
    mutating func failed() -> Duration {
        defer { next = min(next * 2, Self.longest) }
        return next
    }

    mutating func succeeded() {
        next = Self.shortest
    }
}
