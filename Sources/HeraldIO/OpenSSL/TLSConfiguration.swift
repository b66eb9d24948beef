/// How a TLS client connection is made and checked.
///
/// Verification is on unless ``insecure`` is set explicitly: the server's certificate chain must
/// lead to a trusted root (the system's CA store, or the roots in ``caFile`` instead) and name
/// the host connected to. TLS 1.2 is the oldest version spoken.
public struct TLSConfiguration: Sendable, Hashable {
    /// The oldest TLS version a connection may use.
    public enum Version: Sendable, Hashable {
        case tls12
        case tls13

        var wireValue: Int { self == .tls12 ? 0x0303 : 0x0304 }
    }

    /// A PEM file of the roots to trust instead of the system's store (a private CA).
    public var caFile: String?
    /// Whether to skip certificate and host-name verification. Never set silently: the
    /// configuration says `"insecure": true` and `herald check` warns about it.
    public var insecure: Bool
    /// A PEM certificate chain to present (mutual TLS), with ``privateKeyFile``.
    public var certificateFile: String?
    /// The PEM private key of ``certificateFile``.
    public var privateKeyFile: String?
    /// The oldest version spoken.
    public var minimumVersion: Version

    /// A configuration: by default, the system's CA store, full verification, TLS 1.2 or later.
    public init(caFile: String? = nil, insecure: Bool = false, certificateFile: String? = nil, privateKeyFile: String? = nil,
                minimumVersion: Version = .tls12) {
        self.caFile = caFile
        self.insecure = insecure
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
        self.minimumVersion = minimumVersion
    }
}
