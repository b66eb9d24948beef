import Foundation

/// Serialises a ``SandboxResponse`` onto a socket, dripping the body when asked.
enum ResponseWriter {
    static func write(_ response: SandboxResponse, to fd: Int32, close: Bool, pause: (Duration) -> Bool = { _ in true }) -> Bool {
        let reason = SandboxResponse.reasonPhrases[response.status] ?? "Status"
        var head = "HTTP/1.1 \(response.status) \(reason)\r\n"
        for field in response.headers where !["content-length", "connection"].contains(field.name.lowercased()) {
            head += "\(field.name): \(field.value)\r\n"
        }
        head += "Content-Length: \(response.body.count)\r\n"
        head += "Connection: \(close ? "close" : "keep-alive")\r\n\r\n"
        guard Socket.write(fd, Array(head.utf8)) else { return false }
        switch response.delivery {
        case .drip(let chunkSize, let interval):
            var offset = 0
            let size = max(1, chunkSize)
            while offset < response.body.count {
                let end = min(response.body.count, offset + size)
                guard Socket.write(fd, response.body[offset..<end]) else { return false }
                offset = end
                if offset < response.body.count, !pause(interval) { return false }
            }
            return true
        default:
            return response.body.isEmpty || Socket.write(fd, response.body)
        }
    }

    static func writeContinue(to fd: Int32) -> Bool {
        Socket.write(fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
    }
}
