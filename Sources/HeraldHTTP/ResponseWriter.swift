import Foundation
import HeraldIO

/// Serialises an ``HTTPServerResponse`` onto a socket, dripping the body when asked.
enum ResponseWriter {
    /// Writes `response`; with `withoutBody` (the answer to HEAD) the head only, its
    /// `Content-Length` still the body's (RFC 9110 §9.3.2), so a keep-alive client reads the
    /// next response where it starts. False when the peer went away.
    static func write(_ response: HTTPServerResponse, to fd: Int32, close: Bool, withoutBody: Bool = false,
                      pause: (Duration) -> Bool = { _ in true }) -> Bool {
        guard TCPSocket(descriptor: fd).sendAll(head(of: response, close: close)) else { return false }
        if withoutBody { return true }
        switch response.delivery {
        case .drip(let chunkSize, let interval):
            var offset = 0
            let size = max(1, chunkSize)
            while offset < response.body.count {
                let end = min(response.body.count, offset + size)
                guard TCPSocket(descriptor: fd).sendAll(response.body[offset..<end]) else { return false }
                offset = end
                if offset < response.body.count, !pause(interval) { return false }
            }
            return true
        default:
            return response.body.isEmpty || TCPSocket(descriptor: fd).sendAll(response.body)
        }
    }

    /// The whole response as bytes, for a refusal written without blocking.
    static func bytes(of response: HTTPServerResponse, close: Bool) -> [UInt8] {
        head(of: response, close: close) + Array(response.body)
    }

    /// The status line and fields; `Content-Length` is the body's, except for a stream, whose
    /// body the close delimits.
    static func head(of response: HTTPServerResponse, close: Bool) -> [UInt8] {
        let reason = HTTPServerResponse.reasonPhrases[response.status] ?? "Status"
        var head = "HTTP/1.1 \(response.status) \(reason)\r\n"
        for field in response.headers where !["content-length", "connection"].contains(field.name.lowercased()) {
            head += "\(field.name): \(field.value)\r\n"
        }
        if response.stream == nil { head += "Content-Length: \(response.body.count)\r\n" }
        head += "Connection: \(close ? "close" : "keep-alive")\r\n\r\n"
        return Array(head.utf8)
    }

    static func writeContinue(to fd: Int32) -> Bool {
        TCPSocket(descriptor: fd).sendAll(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
    }
}
