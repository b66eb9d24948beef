/// A message to or from the broker as the bridge sees it: a subject, headers in order, a body.
public struct ClusterMessage: Sendable, Hashable {
    /// The subject (`herald.loader.home.finished`).
    public var subject: String
    /// The headers, in order (`Nats-Msg-Id`, `Herald-Node`, …).
    public var headers: [Header]
    /// The body.
    public var payload: [UInt8]
    /// Why the message's header block could not be read (then ``headers`` is empty), or nil.
    public var headerProblem: String?
    /// The size of a message larger than the node's connection takes (``ClusterSettings/maxPayload``
    /// or the server's `max_payload`, the smaller), or nil. Its bytes were passed over unread:
    /// ``headers`` and ``payload`` are empty.
    public var oversize: Int?

    /// One header.
    public struct Header: Sendable, Hashable {
        /// Its name.
        public var name: String
        /// Its value.
        public var value: String

        /// A header.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A message.
    public init(subject: String, headers: [Header] = [], payload: [UInt8], headerProblem: String? = nil, oversize: Int? = nil) {
        self.subject = subject
        self.headers = headers
        self.payload = payload
        self.headerProblem = headerProblem
        self.oversize = oversize
    }

    /// Why an oversized message (see ``oversize``) is not taken, in words.
    static func oversizeReason(_ size: Int) -> String {
        "it is \(size) bytes, more than this node's connection takes (cluster.maxPayload, or the server's max_payload when smaller); "
            + "its bytes were passed over unread"
    }

    /// The first value of header `name` (compared without case, as HTTP-style headers are).
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }
}
