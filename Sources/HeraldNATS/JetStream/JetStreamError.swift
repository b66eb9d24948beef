/// An error the JetStream API answered (`{"error":{"code":…,"err_code":…,"description":…}}`).
///
/// ``errorCode`` is JetStream's own number (stable across versions), ``code`` the HTTP-like
/// status. Compare with the static codes (``streamNameInUse`` etc.).
public struct JetStreamError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP-like status (400, 404, 503...).
    public var code: Int
    /// JetStream's error code (10058 and so on); 0 when the server gave none.
    public var errorCode: Int
    /// The server's description.
    public var errorDescription: String
    /// The API subject (or the publish subject) that answered it.
    public var subject: String

    /// An error as the server described it.
    public init(code: Int, errorCode: Int, description: String, subject: String) {
        self.code = code
        self.errorCode = errorCode
        self.errorDescription = description
        self.subject = subject
    }

    /// The description with the codes and the subject.
    public var description: String { "JetStream error \(errorCode) (\(code)) on '\(subject)': \(errorDescription)" }

    /// A stream of that name exists with another configuration (10058).
    public static let streamNameInUse = 10058
    /// No stream of that name (10059).
    public static let streamNotFound = 10059
    /// No consumer of that name (10014).
    public static let consumerNotFound = 10014
    /// An expected-last-sequence check failed (10071): a KV update with a stale revision.
    public static let wrongLastSequence = 10071
    /// No message matched a get (10037).
    public static let noMessageFound = 10037
    /// No peers to place a stream's or consumer's replicas on (10005): the cluster has fewer
    /// servers than the replicas asked for, or, while it forms, its leader does not know them yet.
    public static let noSuitablePeers = 10005
    /// The cluster has no JetStream leader at the moment (10008), as while it elects one.
    public static let clusterNotAvailable = 10008
    /// A message larger than the stream's `max_msg_size` (10054): never stored, however often sent.
    public static let messageTooLarge = 10054
    /// Consumer name in use with another configuration (10013 in 2.9 wording "consumer already exists").
    public static let consumerNameInUse = 10013
}
