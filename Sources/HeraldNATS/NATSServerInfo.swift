import Foundation

/// What the server says about itself in `INFO` (the fields the client uses).
public struct NATSServerInfo: Sendable, Hashable, Decodable {
    /// The server's unique id.
    public var serverID: String
    /// The configured server name (`--server_name`), if any.
    public var serverName: String?
    /// The server version, e.g. `2.9.10`.
    public var version: String
    /// The largest message (headers and body) the server accepts, in bytes.
    public var maxPayload: Int
    /// Whether the server understands `HPUB` / `HMSG`.
    public var headers: Bool
    /// Whether JetStream is enabled.
    public var jetStream: Bool
    /// Other servers of the cluster clients may connect to (`host:port`).
    public var connectURLs: [String]
    /// Whether the server is shutting down (lame duck mode): the client should move on.
    public var lameDuckMode: Bool
    /// Whether the server requires authentication.
    public var authRequired: Bool
    /// Whether the server requires TLS.
    public var tlsRequired: Bool
    /// Whether the server takes TLS from a client that asks for it (without requiring it).
    public var tlsAvailable: Bool
    /// The nonce a client that authenticates with an NKey or a JWT signs.
    public var nonce: String?

    enum CodingKeys: String, CodingKey {
        case serverID = "server_id", serverName = "server_name", version
        case maxPayload = "max_payload", headers, jetStream = "jetstream"
        case connectURLs = "connect_urls", lameDuckMode = "ldm"
        case authRequired = "auth_required", tlsRequired = "tls_required", tlsAvailable = "tls_available", nonce
    }

    /// Decodes `INFO`'s JSON; absent optional fields take their protocol defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        serverID = try container.decodeIfPresent(String.self, forKey: .serverID) ?? ""
        serverName = try container.decodeIfPresent(String.self, forKey: .serverName)
        version = try container.decodeIfPresent(String.self, forKey: .version) ?? ""
        maxPayload = try container.decodeIfPresent(Int.self, forKey: .maxPayload) ?? 1024 * 1024
        headers = try container.decodeIfPresent(Bool.self, forKey: .headers) ?? false
        jetStream = try container.decodeIfPresent(Bool.self, forKey: .jetStream) ?? false
        connectURLs = try container.decodeIfPresent([String].self, forKey: .connectURLs) ?? []
        lameDuckMode = try container.decodeIfPresent(Bool.self, forKey: .lameDuckMode) ?? false
        authRequired = try container.decodeIfPresent(Bool.self, forKey: .authRequired) ?? false
        tlsRequired = try container.decodeIfPresent(Bool.self, forKey: .tlsRequired) ?? false
        nonce = try container.decodeIfPresent(String.self, forKey: .nonce)
        tlsAvailable = try container.decodeIfPresent(Bool.self, forKey: .tlsAvailable) ?? false
    }

    /// Decodes an `INFO` operation's JSON.
    /// - Throws: ``NATSError`` `.protocolViolation` naming the bad field.
    static func decode(_ json: [UInt8]) throws(NATSError) -> NATSServerInfo {
        do {
            return try JSONDecoder().decode(NATSServerInfo.self, from: Data(json))
        } catch {
            throw .protocolViolation("the server's INFO is not valid JSON: \(error)")
        }
    }
}
