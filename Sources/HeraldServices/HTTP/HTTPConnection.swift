import HeraldIO

/// A connection of the socket HTTP client: the stream (a plain socket, or TLS over one) and
/// the origin it is connected to (`https://host:port`), the key under which it is kept alive.
struct HTTPConnection: Sendable {
    var stream: any ByteStream
    let origin: String
}
