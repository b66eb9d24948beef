import Foundation
import HeraldIO

/// A local HTTPS server for the TLS tests: Python's `ssl` module (tls_server.py, next to this
/// file) presenting a certificate of ``TestCertificates`` (made by the `openssl` command for
/// each run).
///
/// The test binds the listening socket and hands it to Python as its standard input, so the
/// port is known before the child starts and nothing waits for the child to be ready.
public final class TLSTestServer: Sendable {
    /// Why the server could not start.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The newest TLS version the server may speak, for tests of the client's minimum.
    public enum MaximumVersion: String, Sendable {
        /// TLS 1.1: offered with OpenSSL's security level lowered to 0, which TLS 1.1 needs
        /// (its default level refuses TLS 1.0 and 1.1 altogether).
        case tls11 = "TLSv1_1"
    }

    /// The port it listens on (127.0.0.1).
    public let port: Int
    private let process: Process
    private let exited = Gate()

    /// Starts a server presenting `certificate` with `key`, speaking at most `maximumVersion`
    /// (nil: whatever Python's default allows, TLS 1.2 and 1.3).
    public init(certificate: String, key: String, maximumVersion: MaximumVersion? = nil) throws {
        let listening = try TCPSocket.listen(port: 0)
        defer { TCPSocket.close(listening.socket.descriptor) }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("tls_server.py")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.tool("python3"))
        process.arguments = [script.path, certificate, key] + (maximumVersion.map { [$0.rawValue] } ?? [])
        process.standardInput = FileHandle(fileDescriptor: listening.socket.descriptor, closeOnDealloc: false)
        process.standardOutput = FileHandle.nullDevice
        let exited = self.exited
        process.terminationHandler = { _ in exited.open() }
        try process.run()
        self.process = process
        self.port = listening.port
    }

    /// `https://<host>:<port><path>`.
    public func url(_ path: String, host: String = "127.0.0.1") -> URL {
        URL(string: "https://\(host):\(port)\(path)")!
    }

    /// Stops the server (SIGTERM to the child this object started) and waits for it to end.
    public func stop() async {
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
