import Foundation
import HeraldIO
import HeraldNATS
import HeraldTestSupport
import Testing

/// TLS to real nats-servers configured for it (certificates made by `openssl` for each run):
/// the server's certificate is verified (its CA, its name, its dates), a client certificate is
/// presented to a server that verifies clients, and messages larger than a TLS record go
/// through whole.
@Suite(.timeLimit(.minutes(5)), .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"))
struct NATSTLSTests {
    @Test func aClientThatTrustsTheServersCAExchangesMessagesOfEverySizeOverTLS() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let server = try await Self.server(certificates, certificate: certificates.serverCertificate, key: certificates.serverKey)
        defer { Task { await server.stop() } }
        var options = RefusalCheck.options(server, name: "tls")
        options.tls = TLSConfiguration(caFile: certificates.caFile)
        let connection = try NATSConnection(options: options)
        try await connection.connect()
        let subscription = try connection.subscribe("tls.check")
        try await connection.flush()
        // Small ones, and ones of several TLS records (16 KiB each), in order.
        let payloads = (0..<200).map { [UInt8](repeating: UInt8($0 % 251), count: $0 % 10 == 0 ? 100_000 + $0 : $0) }
        for payload in payloads { try connection.publish("tls.check", payload: payload) }
        var iterator = subscription.makeAsyncIterator()
        for payload in payloads {
            let message = await iterator.next()
            #expect(message.map { Array($0.payload) } == payload)
        }
        await connection.close()
    }

    @Test(arguments: ["unknown CA", "wrong name", "expired"])
    func aServerWhoseCertificateDoesNotHoldIsRefusedSayingWhy(_ fault: String) async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let (certificate, key, expected) = switch fault {
        case "wrong name": (certificates.wrongCertificate, certificates.wrongKey, "address mismatch")  // 127.0.0.1 is not wrong.example
        case "expired": (certificates.expiredCertificate, certificates.expiredKey, "certificate has expired")
        default: (certificates.serverCertificate, certificates.serverKey, "unable to get local issuer certificate")
        }
        let server = try await Self.server(certificates, certificate: certificate, key: key)
        defer { Task { await server.stop() } }
        var options = RefusalCheck.options(server, name: "tls")
        // The unknown CA: the system's roots, which do not hold the test CA.
        options.tls = fault == "unknown CA" ? TLSConfiguration() : TLSConfiguration(caFile: certificates.caFile)
        try await RefusalCheck.expectRefusal(options, saying: expected)
    }

    @Test func aServerThatRequiresTLSIsVerifiedEvenWhenTheClientWasNotToldToUseIt() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let server = try await Self.server(certificates, certificate: certificates.serverCertificate, key: certificates.serverKey)
        defer { Task { await server.stop() } }
        try await RefusalCheck.expectRefusal(RefusalCheck.options(server, name: "tls"), saying: "unable to get local issuer certificate")
    }

    @Test func aServerThatVerifiesClientsTakesOurCertificateAndRefusesAClientWithout() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let server = try await Self.server(certificates, certificate: certificates.serverCertificate, key: certificates.serverKey, verifyClients: true)
        defer { Task { await server.stop() } }
        var options = RefusalCheck.options(server, name: "tls")
        options.tls = TLSConfiguration(caFile: certificates.caFile, certificateFile: certificates.clientCertificate, privateKeyFile: certificates.clientKey)
        let connection = try NATSConnection(options: options)
        try await connection.connect()
        try await connection.flush()
        await connection.close()
        options.tls = TLSConfiguration(caFile: certificates.caFile)
        let refused = try NATSConnection(options: options)
        await #expect(throws: (any Error).self) { try await refused.connect() }
        await refused.close()
    }

    @Test func aClientToldToUseTLSRefusesAServerWithoutIt() async throws {
        let server = try await NATSServerProcess.start(jetStream: false)
        defer { Task { await server.stop() } }
        var options = RefusalCheck.options(server, name: "tls")
        options.tls = TLSConfiguration()
        try await RefusalCheck.expectRefusal(options, saying: "does not offer TLS")
    }

    // MARK: - Helpers

    private static func server(_ certificates: TestCertificates, certificate: String, key: String,
                               verifyClients: Bool = false) async throws -> NATSServerProcess {
        let file = certificates.directory.appendingPathComponent("server-\(UUID().uuidString).conf")
        let configuration = """
            tls {
              cert_file: "\(certificate)"
              key_file: "\(key)"
              ca_file: "\(certificates.caFile)"
              verify: \(verifyClients)
            }
            """
        try Data(configuration.utf8).write(to: file)
        return try await NATSServerProcess.start(jetStream: false, arguments: ["-c", file.path])
    }

}
