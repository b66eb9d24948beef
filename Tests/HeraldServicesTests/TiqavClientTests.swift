import Foundation
import HeraldSandbox
import HeraldServices
import Testing
import HeraldTestSupport

@Suite struct TiqavClientTests {
    @Test func randomReturnsImagesWithImageAndThumbnailURLs() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.tiqav()
            let images = try await client.random()
            #expect(images.count == 5)
            let image = try #require(images.first)
            #expect(client.imageURL(for: image).absoluteString == "\(harness.sandbox.baseURL)/img/\(image.id).\(image.ext)")
            #expect(client.thumbnailURL(for: image).lastPathComponent == "\(image.id).th.jpg")
            let bytes = try await client.download(client.imageURL(for: image))
            #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("sandbox image"))
            _ = try await client.download(client.thumbnailURL(for: image))
        }
    }

    @Test func searchEncodesTheQueryAndNothingFoundIsEmpty() async throws {
        try await SandboxHarness.run { harness in
            let client = harness.tiqav()
            let cats = try await client.search("猫")
            #expect(Set(cats.map(\.id)) == ["3om", "m0m"])
            #expect(cats.first?.width == 1036)
            #expect(try await client.search("no such thing at all").isEmpty)
            let error = await serviceError { try await client.search(" ") }
            #expect(error?.kind == .invalidRequest)
        }
    }

    @Test func objectWhereArrayExpectedIsADecodeErrorNotACrash() async throws {
        // The sandbox always answers an array, so a stub plays the misbehaving service.
        let base = try #require(URL(string: "http://tiqav.invalid"))
        let client = TiqavClient(baseURL: base, imageBaseURL: base, transport: StubTransport(body: #"{"error":"oops"}"#))
        let error = await serviceError { try await client.random() }
        #expect(error?.kind == .decoding)
        #expect(error?.location == "(root)")
        #expect(error?.bodyExcerpt == #"{"error":"oops"}"#)
        let html = TiqavClient(baseURL: base, imageBaseURL: base, transport: StubTransport(body: "[]", contentType: "text/html"))
        #expect(await serviceError { try await html.random() }?.kind == .decoding)
    }
}
