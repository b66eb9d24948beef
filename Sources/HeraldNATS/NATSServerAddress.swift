/// One server of the list: a host, a port and optional credentials, from `nats://[user:pass@]host[:port]`,
/// `host:port` or `host`.
///
/// ``description`` is `host:port` and never shows the credentials (events and errors use it).
public struct NATSServerAddress: Sendable, Hashable, CustomStringConvertible {
    /// The host name or literal address.
    public var host: String
    /// The TCP port (4222 when the address names none).
    public var port: Int
    /// The user, from `user:password@`.
    public var user: String?
    /// The password, from `user:password@` (never shown).
    public var password: String?
    /// The token, from `token@`.
    public var token: String?
    /// Whether the address is `tls://…`: the connection must be TLS (verified against the
    /// system's roots unless the options give a ``NATSConnectionOptions/tls`` configuration).
    public var tls = false

    /// Parses an address.
    /// - Throws: ``NATSError`` `.invalidConfiguration` naming the address (credentials masked).
    public init(parsing text: String) throws(NATSError) {
        var rest = Substring(text.trimmingSpaces)
        if let scheme = rest.range(of: "://") {
            let name = rest[rest.startIndex..<scheme.lowerBound].lowercased()
            guard name == "nats" || name == "tls" else {
                throw .invalidConfiguration("the server address scheme '\(name)' is neither nats:// nor tls://")
            }
            tls = name == "tls"
            rest = rest[scheme.upperBound...]
        }
        if let slash = rest.firstIndex(of: "/") { rest = rest[rest.startIndex..<slash] }
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[rest.startIndex..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = credentials.firstIndex(of: ":") {
                user = String(credentials[credentials.startIndex..<colon])
                password = String(credentials[credentials.index(after: colon)...])
            } else {
                token = String(credentials)
            }
        }
        var hostPart = rest
        port = 4222
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw .invalidConfiguration("the server address '\(rest)' has an unclosed '['")
            }
            hostPart = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { port = try Self.port(after.dropFirst(), in: rest) }
        } else if let colon = rest.lastIndex(of: ":") {
            hostPart = rest[rest.startIndex..<colon]
            port = try Self.port(rest[rest.index(after: colon)...], in: rest)
        }
        guard !hostPart.isEmpty else { throw .invalidConfiguration("the server address '\(rest)' has no host") }
        host = String(hostPart)
    }

    /// An address from its parts.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    private static func port(_ text: Substring, in address: Substring) throws(NATSError) -> Int {
        guard let port = Int(text), (1...65535).contains(port) else {
            throw .invalidConfiguration("the port '\(text)' of the server address '\(address)' is not 1-65535")
        }
        return port
    }

    /// `host:port`, without credentials.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Whether two addresses name the same endpoint (credentials aside).
    func sameEndpoint(as other: NATSServerAddress) -> Bool { host == other.host && port == other.port }
}
