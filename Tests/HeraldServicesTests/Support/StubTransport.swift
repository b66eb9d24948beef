import Foundation
import HeraldServices

/// Answers every request with one canned JSON body, for shapes the sandbox never sends.
struct StubTransport: HTTPTransport {
    var status = 200
    var body: String
    var contentType = "application/json"

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": contentType], body: Data(body.utf8))
    }
}
