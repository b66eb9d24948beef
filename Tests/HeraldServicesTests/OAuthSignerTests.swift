import Foundation
import Testing

@testable import HeraldServices

@Suite struct OAuthSignerTests {
    @Test func twitterWorkedExampleSignature() throws {
        let credentials = OAuthCredentials(
            consumerKey: "xvz1evFS4wEEPTGEFPHBog", consumerSecret: "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
            token: "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb",
            tokenSecret: "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE")
        let signer = OAuthSigner(
            credentials: credentials, makeNonce: { "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg" },
            makeTimestamp: { 1_318_622_958 })
        let url = try #require(URL(string: "https://api.twitter.com/1.1/statuses/update.json?include_entities=true"))
        let body = [("status", "Hello Ladies + Gentlemen, a signed OAuth request!")]
        let signature = OAuthSigner.signature(
            method: "POST", url: url, parameters: body + signer.oauthParameters(),
            consumerSecret: credentials.consumerSecret, tokenSecret: credentials.tokenSecret)
        #expect(signature == "hCtSmYh+iHYCEqBWrE7C7hYmtUk=")

        let header = signer.authorizationHeader(method: "POST", url: url, bodyParameters: body)
        #expect(header.hasPrefix("OAuth oauth_consumer_key=\"xvz1evFS4wEEPTGEFPHBog\", oauth_nonce="))
        #expect(header.contains("oauth_signature=\"hCtSmYh%2BiHYCEqBWrE7C7hYmtUk%3D\""))
        #expect(header.hasSuffix("oauth_version=\"1.0\""))
    }

    @Test func rfc5849ExampleSignature() throws {
        let credentials = OAuthCredentials(
            consumerKey: "dpf43f3p2l4k3l03", consumerSecret: "kd94hf93k423kf44",
            token: "nnch734d00sl2jdk", tokenSecret: "pfkkdhi9sl3r4s00")
        let signer = OAuthSigner(
            credentials: credentials, includesVersion: false, makeNonce: { "chapoH" }, makeTimestamp: { 137_131_202 })
        let url = try #require(URL(string: "http://photos.example.net/photos?file=vacation.jpg&size=original"))
        let header = signer.authorizationHeader(method: "GET", url: url)
        #expect(header.contains("oauth_signature=\"MdpQcU8iPSUjWoN%2FUDMsK2sui9I%3D\""))
        #expect(!header.contains("oauth_version"))
    }

    @Test func baseURLDropsDefaultPortAndLowercases() throws {
        let url = try #require(URL(string: "HTTP://Example.COM:80/r%20v/X?id=123"))
        #expect(OAuthSigner.baseURLString(of: url) == "http://example.com/r%20v/X")
        let other = try #require(URL(string: "https://www.example.net:8080/?q=1"))
        #expect(OAuthSigner.baseURLString(of: other) == "https://www.example.net:8080/")
    }

    @Test func credentialsAreRedacted() {
        let credentials = OAuthCredentials(consumerKey: "k", consumerSecret: "s3cret")
        #expect(credentials.consumerKey == "k")
        #expect(credentials.token == nil)
        #expect(!credentials.description.contains("s3cret"))
    }
}
