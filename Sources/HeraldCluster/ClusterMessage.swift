/// A message to or from the broker as the bridge sees it: a subject, headers in order, a body.
public struct ClusterMessage: Sendable, Hashable {
    /// The subject (`herald.loader.home.finished`).
    public var subject: String
    /// The headers, in order (`Nats-Msg-Id`, `Herald-Node`, …).
    public var headers: [Header]
    /// The body.
    public var payload: [UInt8]

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
    public init(subject: String, headers: [Header] = [], payload: [UInt8]) {
        self.subject = subject
        self.headers = headers
        self.payload = payload
    }

    /// The first value of header `name` (compared without case, as HTTP-style headers are).
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }
}
