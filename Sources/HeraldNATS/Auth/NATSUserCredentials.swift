import Foundation

/// A user's credentials as the NATS account system issues them (a `.creds` file): the user's
/// JWT, sent in `CONNECT`, and the user's NKey seed, which signs the server's nonce.
/// `Sendable`; shows neither.
public struct NATSUserCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The user's JWT (public: the server checks it against its account).
    public let jwt: String
    /// The user's key pair, from the seed.
    public let keyPair: NATSNKeyPair

    /// Credentials from a JWT and the user's seed.
    public init(jwt: String, seed: String) throws(NATSError) {
        let jwt = jwt.trimmingWhiteSpace
        guard jwt.split(separator: ".", omittingEmptySubsequences: false).count == 3 else {
            throw .connectionFailed("the user JWT is not a JWT (three parts separated by dots)")
        }
        self.jwt = jwt
        self.keyPair = try NATSNKeyPair(seed: seed)
    }

    /// Credentials from a `.creds` file's text: the blocks `-----BEGIN NATS USER JWT-----` and
    /// `-----BEGIN USER NKEY SEED-----`, each ended by its `------END …------` line.
    /// - Throws: ``NATSError`` `.connectionFailed` naming the block that is missing or wrong.
    public init(parsing text: String) throws(NATSError) {
        guard let jwt = Self.block(in: text, named: "NATS USER JWT") else {
            throw .connectionFailed("no \"-----BEGIN NATS USER JWT-----\" block with a JWT in it")
        }
        guard let seed = Self.block(in: text, named: "USER NKEY SEED") else {
            throw .connectionFailed("no \"-----BEGIN USER NKEY SEED-----\" block with a seed in it")
        }
        try self.init(jwt: jwt, seed: seed)
    }

    /// Credentials read from a `.creds` file.
    /// - Throws: ``NATSError`` `.connectionFailed` naming the file and what is wrong with it.
    public init(contentsOf path: String) throws(NATSError) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw .connectionFailed("the credentials file \(path) cannot be read: \(error.localizedDescription)")
        }
        do throws(NATSError) {
            try self.init(parsing: text)
        } catch {
            throw .connectionFailed("the credentials file \(path): \(error.message)")
        }
    }

    /// The first non-empty line between the block's `BEGIN` line and its `END` line.
    private static func block(in text: String, named name: String) -> String? {
        let lines = text.split(whereSeparator: \.isNewline).map { String($0).trimmingWhiteSpace }
        guard let begin = lines.firstIndex(where: { $0.hasPrefix("-----BEGIN \(name)") && $0.hasSuffix("-") }) else { return nil }
        for line in lines[(begin + 1)...] {
            if line.hasPrefix("---") { return nil }
            if !line.isEmpty { return line }
        }
        return nil
    }

    /// Shows the user's public key only.
    public var description: String { "NATSUserCredentials(\(keyPair.publicKey))" }
}
