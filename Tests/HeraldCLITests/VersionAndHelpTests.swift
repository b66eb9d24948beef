import Foundation
import Testing
import HeraldTestSupport

@Suite struct VersionAndHelpTests {
    static let herald = BuiltProducts.url(of: "herald")

    @Test
    func versionPrintsOneLine() async throws {
        let herald = try #require(Self.herald)
        let result = try #require(try await ChildProcess.run(herald, ["--version"]))
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("herald "))
        #expect(result.stdout.split(separator: "\n").count == 1)
    }
}
