/// Faults the sandbox injects into service answers, decided per request by a generator seeded
/// with ``seed``, so a run is reproducible. Rates are fractions in 0…1; `/_sandbox/` paths are
/// never faulted.
public struct SandboxFaults: Sendable, Hashable {
    /// The generator seed.
    public var seed: UInt64
    /// Added before every answer.
    public var latency: Duration
    /// Fraction of requests answered 500 / 503 with a Twitter-style error body.
    public var serverErrorRate: Double
    /// Fraction of requests whose connection is closed with no answer.
    public var dropRate: Double
    /// Fraction of successful answers whose body is cut in half (with a matching length).
    public var truncateRate: Double
    /// Fraction of successful answers whose body is corrupted, in the way ``malformation`` says.
    public var malformRate: Double
    /// How a malformed answer is malformed.
    public var malformation: Malformation
    /// Fraction of answers whose body is written slowly, `dripChunkSize` bytes per `dripPause`.
    public var dripRate: Double
    /// Bytes per write when dripping.
    public var dripChunkSize: Int
    /// Pause between writes when dripping.
    public var dripPause: Duration

    /// Creates a fault plan; the default injects nothing.
    public init(
        seed: UInt64 = 1, latency: Duration = .zero, serverErrorRate: Double = 0, dropRate: Double = 0,
        truncateRate: Double = 0, malformRate: Double = 0, malformation: Malformation = .corruptBytes, dripRate: Double = 0,
        dripChunkSize: Int = 16, dripPause: Duration = .milliseconds(5)
    ) {
        self.seed = seed
        self.latency = latency
        self.serverErrorRate = serverErrorRate
        self.dropRate = dropRate
        self.truncateRate = truncateRate
        self.malformRate = malformRate
        self.malformation = malformation
        self.dripRate = dripRate
        self.dripChunkSize = dripChunkSize
        self.dripPause = dripPause
    }

    /// No faults at all.
    public static let none = SandboxFaults()

    /// The ways a malformed answer can be wrong; each must reach a client as a decode error.
    public enum Malformation: Sendable, Hashable {
        /// Bytes flipped and garbage inserted: a syntax error.
        case corruptBytes
        /// Valid syntax of the wrong shape: an object where an array was expected (the
        /// Tiqav API's known failure), an array where an object was, another XML root.
        case wrongShape
        /// A 2xx with an empty body.
        case emptyBody
        /// The body unchanged under a `text/html` content type.
        case wrongContentType
    }
}
