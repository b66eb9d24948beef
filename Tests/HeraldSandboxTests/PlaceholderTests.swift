import Testing
@testable import HeraldSandbox

@Test func placeholder() { #expect(Bool(true)) }
