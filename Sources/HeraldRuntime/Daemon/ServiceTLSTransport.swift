import HeraldIO
import HeraldServices

/// A service's transport: its configured TLS settings (`caFile`, `insecure`) on each request
/// that has none, then the shared transport.
struct ServiceTLSTransport: HTTPTransport {
    let base: any HTTPTransport
    let tls: TLSConfiguration

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var request = request
        if request.tls == nil { request.tls = tls }
        return try await base.send(request)
    }
}
