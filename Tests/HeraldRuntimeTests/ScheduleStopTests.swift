import Foundation
import HeraldLoaders
import Testing

extension ScheduleTests {
    /// A revoked token (a Mastodon 401) is not retried with backoff: the schedule stops loading.
    @Test func aLoadThatStopsTheLoaderEndsTheLoads() async {
        let revoked = LoadOutcome.failed(LoadError(kind: LoadError.unauthorizedKind, message: "token revoked", status: 401))
        let times = await drive(SchedulePolicy(interval: .seconds(30)), [revoked, Self.ok, Self.ok], loads: 4)
        #expect(times == [0])
        #expect(LoadError(kind: "httpStatus", message: "x", status: 401).stopsLoader == false)
    }
}
