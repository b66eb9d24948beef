import HeraldNATS

/// How a node authenticates to the NATS servers (`cluster.auth`): one of the ways NATS servers
/// know their clients. Secrets are held here only; `Sendable`, and never shows them.
public enum ClusterAuthentication: Sendable, Hashable, CustomStringConvertible {
    /// `authorization { token: … }`.
    case token(String)
    /// `authorization { users = [{user: …, password: …}] }`.
    case userPassword(user: String, password: String)
    /// `authorization { users = [{nkey: U…}] }`: the user's key pair signs the server's nonce.
    case nkey(NATSNKeyPair)
    /// Operator mode: a user's JWT and seed, as a `.creds` file holds them.
    case credentials(NATSUserCredentials)

    /// Sets the client's options for this way.
    func apply(to options: inout NATSConnectionOptions) {
        switch self {
        case .token(let token): options.token = token
        case .userPassword(let user, let password):
            options.user = user
            options.password = password
        case .nkey(let pair): options.nkey = pair
        case .credentials(let credentials): options.userCredentials = credentials
        }
    }

    /// The kind and the public part only.
    public var description: String {
        switch self {
        case .token: "token"
        case .userPassword(let user, _): "user \(user) with a password"
        case .nkey(let pair): "NKey \(pair.publicKey)"
        case .credentials(let credentials): "credentials of \(credentials.keyPair.publicKey)"
        }
    }
}
