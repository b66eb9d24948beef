import Foundation
import HeraldIO
import HeraldTestSupport

/// A local HTTPS server for the TLS tests: Python's `ssl` module (Support/tls_server.py) with
/// certificates made by the `openssl` command in a temporary directory: a CA, a certificate for
/// `localhost` and 127.0.0.1 signed by it, and one for `wrong.example` signed by it too.
///
/// The test binds the listening socket and hands it to Python as its standard input, so the
/// port is known before the child starts and nothing waits for the child to be ready.
final class TLSTestServer: Sendable {
    /// The certificates of one test run.
    struct Certificates: Sendable {
        let directory: URL
        var caFile: String { directory.appendingPathComponent("ca.pem").path }
        var serverCertificate: String { directory.appendingPathComponent("server.pem").path }
        var serverKey: String { directory.appendingPathComponent("server.key").path }
        var wrongCertificate: String { directory.appendingPathComponent("wrong.pem").path }
        var wrongKey: String { directory.appendingPathComponent("wrong.key").path }

        /// Makes the CA and the two server certificates with the `openssl` command.
        static func make() async throws -> Certificates {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-tls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let certificates = Certificates(directory: directory)
            let openssl = try TLSTestServer.tool("openssl")
            func run(_ arguments: [String]) async throws {
                let output = try await Tool.run(openssl, arguments)
                guard output.status == 0 else { throw TLSTestServer.Failure("openssl \(arguments.first ?? ""): \(output.stderr)") }
            }
            let path = directory.path
            try await run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                           "-keyout", "\(path)/ca.key", "-out", "\(path)/ca.pem", "-days", "2", "-subj", "/CN=Herald Test CA"])
            for (name, subject, names) in [("server", "localhost", "DNS:localhost,IP:127.0.0.1"), ("wrong", "wrong.example", "DNS:wrong.example")] {
                try await run(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                               "-keyout", "\(path)/\(name).key", "-out", "\(path)/\(name).csr", "-subj", "/CN=\(subject)"])
                let extensions = directory.appendingPathComponent("\(name).ext")
                try Data("subjectAltName=\(names)\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n".utf8).write(to: extensions)
                try await run(["x509", "-req", "-in", "\(path)/\(name).csr", "-CA", "\(path)/ca.pem", "-CAkey", "\(path)/ca.key",
                               "-CAcreateserial", "-out", "\(path)/\(name).pem", "-days", "2", "-extfile", extensions.path])
            }
            return certificates
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    let port: Int
    private let process: Process
    private let exited = Gate()

    /// Starts a server presenting `certificate` with `key`.
    init(certificate: String, key: String) throws {
        let listening = try TCPSocket.listen(port: 0)
        defer { TCPSocket.close(listening.socket.descriptor) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("tls_server.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.tool("python3"))
        process.arguments = [script.path, certificate, key]
        process.standardInput = FileHandle(fileDescriptor: listening.socket.descriptor, closeOnDealloc: false)
        process.standardOutput = FileHandle.nullDevice
        let exited = self.exited
        process.terminationHandler = { _ in exited.open() }
        try process.run()
        self.process = process
        self.port = listening.port
    }

    /// `https://<host>:<port><path>`.
    func url(_ path: String, host: String = "127.0.0.1") -> URL {
        URL(string: "https://\(host):\(port)\(path)")!
    }

    /// Stops the server (SIGTERM to the child this object started) and waits for it to end.
    func stop() async {
        if process.isRunning { process.terminate() }
        await exited.wait()
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    static func tool(_ name: String) throws -> String {
        guard let path = Tool.find(["/usr/bin/\(name)", "/bin/\(name)", "/usr/local/bin/\(name)"]) else {
            throw Failure("\(name) is not installed (.ci/run installs it)")
        }
        return path
    }
}
