import Foundation

/// Operators, accounts, users and their `.creds` files made by the official NATS libraries
/// (Tests/Tools/nats-accounts, a small Go program built offline against Debian's
/// `golang-github-nats-io-jwt-dev` and `-nkeys-dev`, which `.ci/run` installs), so the client's
/// reading of credentials is proven against what the NATS account system really issues.
///
/// A test that needs them fails when they cannot be had, unless `HERALD_SKIP_GO_TOOLS=1` (a
/// machine without Go) skips it.
public struct NATSAccounts: Sendable {
    /// The operator's JWT file (the server's `operator`).
    public let operatorJWT: String
    /// The account's public key and JWT (the server's `resolver_preload`).
    public let accountPublicKey: String
    public let accountJWT: String
    /// A user of the account (`.creds`), one whose JWT expired an hour ago, and a user of an
    /// account the server does not know.
    public let userCreds: String
    public let expiredCreds: String
    public let strangerCreds: String
    /// A user's NKey, for a server that lists users by public key.
    public let nkeyUserSeed: String
    public let nkeyUserPublicKey: String

    /// Whether tests that need Go are skipped on this machine.
    public static let skipped = ProcessInfo.processInfo.environment["HERALD_SKIP_GO_TOOLS"] == "1"

    /// Makes a fresh set in `directory`.
    public static func make(in directory: URL) async throws -> NATSAccounts {
        let tool = try await built.run()
        let output = try await Tool.run(tool, [directory.path])
        guard output.status == 0 else { throw Unavailable(description: "nats-accounts failed: \(output.stderr)") }
        let fields = try JSONDecoder().decode([String: String].self, from: Data(output.stdout.utf8))
        func field(_ name: String) throws -> String {
            guard let value = fields[name] else { throw Unavailable(description: "nats-accounts printed no \(name)") }
            return value
        }
        return NATSAccounts(operatorJWT: try field("operatorJWT"), accountPublicKey: try field("accountPublicKey"),
                            accountJWT: try field("accountJWT"), userCreds: try field("userCreds"),
                            expiredCreds: try field("expiredCreds"), strangerCreds: try field("strangerCreds"),
                            nkeyUserSeed: try field("nkeyUserSeed"), nkeyUserPublicKey: try field("nkeyUserPublicKey"))
    }

    /// A server configuration in operator mode that trusts this operator and knows the account.
    public var operatorModeConfiguration: String {
        """
        operator: "\(operatorJWT)"
        resolver: MEMORY
        resolver_preload: {
          \(accountPublicKey): "\(accountJWT)"
        }
        """
    }

    /// Why the tool could not be built or run.
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    private static let built = Build()

    private actor Build {
        private var made: Result<String, Unavailable>?

        func run() async throws -> String {
            if let made { return try made.get() }
            let result = await make()
            made = result
            return try result.get()
        }

        private func make() async -> Result<String, Unavailable> {
            let source = PythonClients.packageRoot.appendingPathComponent("Tests/Tools/nats-accounts")
            let binary = PythonClients.packageRoot.appendingPathComponent(".build/test-tools/nats-accounts")
            let building = binary.path + "-\(UUID().uuidString)"
            do {
                let build = try await Tool.run("/usr/bin/env", ["GO111MODULE=off", "GOPATH=/usr/share/gocode", "GOCACHE=/tmp/herald-go-cache",
                                                                "sh", "-c", "cd \"$1\" && go build -o \"$2\" . && mv \"$2\" \"$3\"",
                                                                "sh", source.path, building, binary.path])
                guard build.status == 0 else {
                    return .failure(Unavailable(description: "go build of Tests/Tools/nats-accounts failed (install golang-go, golang-github-nats-io-jwt-dev and golang-github-nats-io-nkeys-dev, or set HERALD_SKIP_GO_TOOLS=1): \(build.stderr)"))
                }
                return .success(binary.path)
            } catch {
                return .failure(Unavailable(description: "go cannot be run: \(error)"))
            }
        }
    }
}
