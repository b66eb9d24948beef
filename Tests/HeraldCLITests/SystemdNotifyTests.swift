import Foundation
import HeraldTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `herald run` speaks systemd's notify protocol to the socket `NOTIFY_SOCKET` names: the test
/// owns that socket, as the service manager would, and runs the daemon as a child process.
@Suite struct SystemdNotifyTests {
    static let loaders = #""images": {"kind": "tiqav", "service": "tiqav", "every": "1h"}"#

    static func environment(notify: String, extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = notify
        environment["WATCHDOG_USEC"] = nil
        environment["WATCHDOG_PID"] = nil
        return environment.merging(extra) { _, new in new }
    }

    @Test(.timeLimit(.minutes(5)))
    func readyReloadingAndStoppingReachAnAbstractSocket() async throws {
        let rig = try ReloadRig()
        defer { rig.remove() }
        try rig.write(loaders: Self.loaders)
        let listener = try NotifyListener(address: "@herald-test-\(UUID().uuidString)")
        let (child, _) = try await rig.start(environment: Self.environment(notify: listener.address))
        #expect(await listener.wait { $0.contains { $0.hasPrefix("READY=1") } }, "\(listener.received)")
        let ready = try #require(listener.received.first { $0.hasPrefix("READY=1") })
        #expect(ready.contains("STATUS=1 loader, 2 subscribers; config "), "\(ready)")

        try rig.write(loaders: Self.loaders + #", "todos": {"kind": "todo", "service": "baas", "bucket": "todos", "every": "1h"}"#)
        child.signal(SIGHUP)
        #expect(await listener.wait { messages in
            guard let reloading = messages.firstIndex(where: { $0.hasPrefix("RELOADING=1") }) else { return false }
            return messages[reloading...].contains { $0.hasPrefix("READY=1") && $0.contains("2 loaders") }
        }, "\(listener.received)")
        let reloading = try #require(listener.received.first { $0.hasPrefix("RELOADING=1") })
        let monotonic = try #require(reloading.split(separator: "\n").first { $0.hasPrefix("MONOTONIC_USEC=") })
        #expect(UInt64(monotonic.dropFirst("MONOTONIC_USEC=".count)) != nil, "\(reloading)")

        child.signal(SIGTERM)
        #expect(await listener.wait { $0.contains { $0.hasPrefix("STOPPING=1") } }, "\(listener.received)")
        let result = try #require(await child.finish())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!listener.received.contains { $0.contains("WATCHDOG=1") }, "no watchdog was asked for")
    }

    @Test(.timeLimit(.minutes(5)))
    func theWatchdogIsFedThroughTheBusOnAPathSocket() async throws {
        let rig = try ReloadRig()
        defer { rig.remove() }
        try rig.write(loaders: Self.loaders)
        let listener = try NotifyListener(address: rig.directory.appendingPathComponent("notify").path)
        // WatchdogSec=0.2s: a beat every 100 ms, each after a heartbeat came through the bus.
        let (child, _) = try await rig.start(environment: Self.environment(notify: listener.address, extra: ["WATCHDOG_USEC": "200000"]))
        #expect(await listener.wait { $0.filter { $0 == "WATCHDOG=1" }.count >= 3 }, "\(listener.received)")

        child.signal(SIGTERM)
        let result = try #require(await child.finish())
        #expect(result.status == 0, "\(result.stderr)")
        // Each beat followed a heartbeat the archive saw.
        #expect(rig.archive.contains("\"topic\":\"herald.watchdog\""))
    }

    @Test(.timeLimit(.minutes(5)))
    func aWatchdogMeantForAnotherProcessIsNotFed() async throws {
        let rig = try ReloadRig()
        defer { rig.remove() }
        try rig.write(loaders: Self.loaders)
        let listener = try NotifyListener(address: "@herald-test-\(UUID().uuidString)")
        let (child, _) = try await rig.start(environment: Self.environment(notify: listener.address,
                                                                          extra: ["WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"]))
        #expect(await listener.wait { $0.contains { $0.hasPrefix("READY=1") } })
        child.signal(SIGTERM)
        #expect(await listener.wait { $0.contains { $0.hasPrefix("STOPPING=1") } })
        let result = try #require(await child.finish())
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!listener.received.contains("WATCHDOG=1"), "\(listener.received)")
        #expect(!rig.archive.contains("herald.watchdog"))
    }
}
