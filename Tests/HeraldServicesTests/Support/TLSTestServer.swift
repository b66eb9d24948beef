import Foundation
import HeraldIO
import HeraldTestSupport

/// A local HTTPS server for the TLS tests: Python's `ssl` module (Support/tls_server.py)
/// presenting a certificate of ``TestCertificates`` (made by the `openssl` command for each run).
///
/// The test binds the listening socket and hands it to Python as its standard input, so the
/// port is known before the child starts and nothing waits for the child to be ready.
final class TLSTestServer: Sendable {
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
