import Foundation
import HeraldHTTP

/// One HTTP request as the sandbox received it (the shared server's request).
public typealias SandboxRequest = HTTPServerRequest

/// One HTTP response the sandbox sends, with how to deliver it, faults included (the shared
/// server's response).
public typealias SandboxResponse = HTTPServerResponse

extension HTTPServerResponse {
    /// A JSON response written by the sandbox's own JSON writer.
    static func json(_ status: Int, _ value: SandboxJSON, headers: [(name: String, value: String)] = []) -> SandboxResponse {
        SandboxResponse(
            status: status, headers: [("Content-Type", "application/json; charset=utf-8")] + headers,
            body: Data(value.serialized().utf8))
    }

    /// A Twitter-style error: `{"errors":[{"code":N,"message":"…"}]}`.
    static func twitterError(_ status: Int, code: Int, _ message: String, headers: [(name: String, value: String)] = []) -> SandboxResponse {
        json(status, .object([("errors", .array([.object([("code", .int(Int64(code))), ("message", .string(message))])]))]), headers: headers)
    }
}

