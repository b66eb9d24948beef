import Foundation
import Testing

@testable import HeraldServices

@Suite struct ServiceDatesTests {
    @Test func parsesTwitterDates() {
        #expect(ServiceDates.parseTwitter("Wed Oct 10 20:19:24 +0000 2018")?.timeIntervalSince1970 == 1_539_202_764)
        #expect(ServiceDates.parseTwitter("Wed Oct 10 22:19:24 +0200 2018")?.timeIntervalSince1970 == 1_539_202_764)
        #expect(ServiceDates.parseTwitter("Wed Foo 10 20:19:24 +0000 2018") == nil)
        #expect(ServiceDates.parseTwitter("2018-10-10") == nil)
    }

    @Test func parsesBaaSDates() {
        #expect(ServiceDates.parseISO8601("2018-10-10T20:19:24.500Z")?.timeIntervalSince1970 == 1_539_202_764.5)
        #expect(ServiceDates.parseISO8601("2018-10-10T20:19:24Z")?.timeIntervalSince1970 == 1_539_202_764)
        #expect(ServiceDates.parseISO8601("2018-10-10T21:19:24.000+01:00")?.timeIntervalSince1970 == 1_539_202_764)
        #expect(ServiceDates.parseISO8601("2018-13-10T20:19:24Z") == nil)
        #expect(ServiceDates.parseISO8601("garbage") == nil)
    }

    @Test func parsesHTTPDates() {
        #expect(ServiceDates.parseHTTP("Sun, 06 Nov 1994 08:49:37 GMT")?.timeIntervalSince1970 == 784_111_777)
    }
}
