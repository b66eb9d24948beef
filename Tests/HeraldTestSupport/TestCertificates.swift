import Foundation

/// Certificates for TLS tests, made by the `openssl` command in a temporary directory: a CA
/// ("Herald Test CA"), and signed by it a server certificate for `localhost` and 127.0.0.1, one
/// for `wrong.example`, one for `localhost` that expired in 2020, and a client certificate
/// (mutual TLS). Each with its key (PEM, unencrypted). `.ci/run` installs `openssl`.
public struct TestCertificates: Sendable {
    /// The directory that holds them (``remove()`` deletes it).
    public let directory: URL

    public var caFile: String { file("ca.pem") }
    public var serverCertificate: String { file("server.pem") }
    public var serverKey: String { file("server.key") }
    public var wrongCertificate: String { file("wrong.pem") }
    public var wrongKey: String { file("wrong.key") }
    public var expiredCertificate: String { file("expired.pem") }
    public var expiredKey: String { file("expired.key") }
    public var clientCertificate: String { file("client.pem") }
    public var clientKey: String { file("client.key") }

    private func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Why they could not be made.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Makes the CA and every certificate.
    public static func make() async throws -> TestCertificates {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-certificates-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard let openssl = Tool.find(["/usr/bin/openssl", "/usr/local/bin/openssl", "/opt/homebrew/bin/openssl"]) else {
            throw Failure(description: "openssl is not installed (.ci/run installs it)")
        }
        let path = directory.path
        func run(_ arguments: [String]) async throws {
            let output = try await Tool.run("/usr/bin/env", ["sh", "-c", "cd \"$0\" && exec \"$@\"", path, openssl] + arguments)
            guard output.status == 0 else { throw Failure(description: "openssl \(arguments.prefix(2).joined(separator: " ")): \(output.stderr)") }
        }
        // `openssl ca` signs with dates of our choosing (an expired certificate among them).
        let configuration = """
            [ca]
            default_ca = test
            [test]
            database = index.txt
            new_certs_dir = .
            serial = serial
            default_md = sha256
            policy = any
            copy_extensions = none
            unique_subject = no
            [any]
            commonName = supplied
            [server]
            subjectAltName = DNS:localhost,IP:127.0.0.1
            basicConstraints = CA:FALSE
            extendedKeyUsage = serverAuth
            [wrong]
            subjectAltName = DNS:wrong.example
            basicConstraints = CA:FALSE
            extendedKeyUsage = serverAuth
            [client]
            basicConstraints = CA:FALSE
            extendedKeyUsage = clientAuth
            """
        try Data(configuration.utf8).write(to: directory.appendingPathComponent("ca.cnf"))
        try Data().write(to: directory.appendingPathComponent("index.txt"))
        try Data("01\n".utf8).write(to: directory.appendingPathComponent("serial"))
        try await run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                       "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Herald Test CA"])
        let certificates: [(name: String, subject: String, section: String, dates: [String])] = [
            ("server", "localhost", "server", ["-days", "2"]),
            ("wrong", "wrong.example", "wrong", ["-days", "2"]),
            ("expired", "localhost", "server", ["-startdate", "20200101000000Z", "-enddate", "20200102000000Z"]),
            ("client", "herald-client", "client", ["-days", "2"]),
        ]
        for certificate in certificates {
            try await run(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                           "-keyout", "\(certificate.name).key", "-out", "\(certificate.name).csr", "-subj", "/CN=\(certificate.subject)"])
            try await run(["ca", "-batch", "-config", "ca.cnf", "-cert", "ca.pem", "-keyfile", "ca.key", "-in", "\(certificate.name).csr",
                           "-out", "\(certificate.name).pem", "-extensions", certificate.section, "-notext"] + certificate.dates)
        }
        return TestCertificates(directory: directory)
    }

    /// Deletes the directory.
    public func remove() { try? FileManager.default.removeItem(at: directory) }
}
