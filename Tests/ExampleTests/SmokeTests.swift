import Testing
@testable import Herald

@Test func smoke() { #expect(1 + 1 == 2) }
