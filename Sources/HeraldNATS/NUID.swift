/// Unique, unguessable tokens for inbox subjects: 22 base-62 characters from the system's random
/// generator (about 131 bits), as NATS clients use for `_INBOX.<nuid>`.
enum NUID {
    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    /// A fresh 22-character token.
    static func next() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8]()
        bytes.reserveCapacity(22)
        for _ in 0..<22 { bytes.append(alphabet[Int(generator.next(upperBound: UInt8(62)))]) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
