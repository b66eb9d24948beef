// A test-only stand-in for `herald run` that kills itself (SIGKILL, as a power cut would) when
// the post schedulers reach a fault point, for the crash tests. The shipping `herald` has no
// such hook; this program is built beside it and never installed.
//
//     herald-crash-run <after-intent|after-post> --config <path>

import Foundation
@_spi(CrashTesting) import HeraldRuntime
import HeraldSubscribers

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("herald-crash-run: \(message)\n".utf8))
    exit(status)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 3, arguments[1] == "--config", let point = PostScheduler.FaultPoint(rawValue: arguments[0]) else {
    fail("usage: herald-crash-run <after-intent|after-post> --config <path>", status: 2)
}
let configuration: HeraldConfiguration
do {
    configuration = try ConfigLoader().load(contentsOf: URL(fileURLWithPath: arguments[2]))
} catch {
    fail("\(arguments[2]): \(error)", status: 2)
}
let daemon = HeraldDaemon(configuration: configuration, postFaultHook: { reached in
    if reached == point { kill(getpid(), SIGKILL) }
})
do {
    try await daemon.run(stopOnSignals: true)
    exit(0)
} catch {
    fail("\(error)", status: 1)
}
