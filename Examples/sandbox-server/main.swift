// sandbox-server: runs the loopback emulator of the Twitter-style API, Tiqav and NEC BaaS
// until SIGINT or SIGTERM.
//
//     swift run sandbox-server [--port N] [--status-interval SECONDS] [--todo-interval SECONDS] [--seed N]
//         [--latency-ms N] [--error-rate F] [--drop-rate F] [--truncate-rate F]
//         [--malform-rate F] [--drip-rate F]
//
// Point any HTTP client at the printed URL; the OAuth and BaaS credentials it accepts are
// printed too and served at /_sandbox/config.

import Dispatch
import Foundation
import HeraldSandbox

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let usage = """
    usage: sandbox-server [--port N] [--status-interval SECONDS] [--todo-interval SECONDS] [--seed N] [--latency-ms N]
                          [--error-rate F] [--drop-rate F] [--truncate-rate F] [--malform-rate F] [--drip-rate F]

    """
var configuration = SandboxConfiguration()
var arguments = CommandLine.arguments.dropFirst()
func usageError() -> Never {
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}
// Each value is parsed as its own type and range-checked, so no flag can trap the program.
func integer(_ text: String, in range: ClosedRange<Int>) -> Int {
    guard let value = Int(text), range.contains(value) else { usageError() }
    return value
}
func number(_ text: String, in range: ClosedRange<Double>) -> Double {
    guard let value = Double(text), value.isFinite, range.contains(value) else { usageError() }
    return value
}
while let argument = arguments.popFirst() {
    guard let value = arguments.popFirst() else { usageError() }
    switch argument {
    case "--port": configuration.port = integer(value, in: 0...65_535)
    case "--status-interval": configuration.statusInterval = number(value, in: 0...86_400)
    case "--todo-interval": configuration.todoInterval = number(value, in: 0.001...86_400)
    case "--seed":
        guard let seed = UInt64(value) else { usageError() }
        configuration.faults.seed = seed
    case "--latency-ms": configuration.faults.latency = .milliseconds(integer(value, in: 0...3_600_000))
    case "--error-rate": configuration.faults.serverErrorRate = number(value, in: 0...1)
    case "--drop-rate": configuration.faults.dropRate = number(value, in: 0...1)
    case "--truncate-rate": configuration.faults.truncateRate = number(value, in: 0...1)
    case "--malform-rate": configuration.faults.malformRate = number(value, in: 0...1)
    case "--drip-rate": configuration.faults.dripRate = number(value, in: 0...1)
    default: usageError()
    }
}

let sandbox: Sandbox
do {
    sandbox = try await Sandbox.start(configuration)
} catch {
    FileHandle.standardError.write(Data("sandbox-server: \(error)\n".utf8))
    exit(1)
}

/// Writes a line to standard output at once (no buffering, so a parent process sees it).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let credentials = sandbox.configuration.credentials
say("sandbox listening on \(sandbox.baseURL)")
say("  twitter: consumer key \(credentials.consumerKey), secret \(credentials.consumerSecret)")
say("           token \(credentials.token), secret \(credentials.tokenSecret)")
say("  baas:    tenant \(sandbox.configuration.baasTenant), X-Application-Id \(sandbox.configuration.baasApplicationID), X-Application-Key \(sandbox.configuration.baasApplicationKey)")
say("  tiqav:   \(sandbox.baseURL)/search/random.json, images at \(sandbox.imageBaseURL)")

// Wait for SIGINT or SIGTERM, then stop cleanly.
signal(SIGINT, SIG_IGN)
signal(SIGTERM, SIG_IGN)
let (signals, signalContinuation) = AsyncStream<Int32>.makeStream()
let signalSources = [SIGINT, SIGTERM].map { number in
    let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
    source.setEventHandler { signalContinuation.yield(number) }
    source.resume()
    return source
}
for await number in signals {
    say("received signal \(number), stopping")
    break
}
await sandbox.stop()
say("stopped")
