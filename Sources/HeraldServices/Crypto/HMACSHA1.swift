/// HMAC (RFC 2104) over SHA-1, as OAuth 1.0a's `HMAC-SHA1` signature method needs.
public enum HMACSHA1 {
    /// The 20-byte authentication code of `message` under `key`.
    public static func authenticationCode(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var blockKey = key.count > SHA1.blockByteCount ? SHA1.hash(key) : key
        blockKey.append(contentsOf: repeatElement(0, count: SHA1.blockByteCount - blockKey.count))
        var inner = SHA1()
        inner.update(blockKey.map { $0 ^ 0x36 })
        inner.update(message)
        let innerDigest = inner.finalize()
        var outer = SHA1()
        outer.update(blockKey.map { $0 ^ 0x5C })
        outer.update(innerDigest)
        return outer.finalize()
    }

    /// The authentication code of the UTF-8 bytes of `message` under the UTF-8 bytes of `key`.
    public static func authenticationCode(key: String, message: String) -> [UInt8] {
        authenticationCode(key: Array(key.utf8), message: Array(message.utf8))
    }
}
