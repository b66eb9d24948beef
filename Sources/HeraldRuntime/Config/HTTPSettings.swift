/// The `http` section: where the status endpoint (metrics, `/status`, the live page) listens.
///
/// Loopback only unless ``allowRemote`` is set: the endpoint has no authentication, and its
/// event stream shows every event of the bus.
public struct HTTPSettings: Sendable, Hashable {
    /// The IPv4 address to bind (`127.0.0.1`; `localhost` is read as that).
    public var host: String
    /// The port (0 picks a free one).
    public var port: Int
    /// Whether a non-loopback ``host`` (`0.0.0.0`, a LAN address) was asked for explicitly.
    public var allowRemote: Bool

    /// Settings for `host:port`.
    public init(host: String = "127.0.0.1", port: Int, allowRemote: Bool = false) {
        self.host = host
        self.port = port
        self.allowRemote = allowRemote
    }

    /// Whether `host` is in 127.0.0.0/8.
    public static func isLoopback(_ host: String) -> Bool {
        ipv4Octets(host)?.first == 127
    }

    /// The four octets of a dotted-quad IPv4 address (`192.168.0.10`), nil for anything else.
    ///
    /// The grammar of `inet_pton`, which the status endpoint binds with: four decimal numbers
    /// 0...255 without leading zeros (`127.0.0.01` is refused there, so here too).
    static func ipv4Octets(_ host: String) -> [Int]? {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        let octets = parts.compactMap { part -> Int? in
            guard (1...3).contains(part.count), part.allSatisfy(\.isASCII), part.allSatisfy(\.isNumber),
                  part.count == 1 || part.first != "0" else { return nil }
            return Int(part).flatMap { $0 <= 255 ? $0 : nil }
        }
        return octets.count == 4 ? octets : nil
    }
}
