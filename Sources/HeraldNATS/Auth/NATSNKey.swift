import HeraldIO

/// An NKey: NATS's encoding of an Ed25519 key as text (`SU…` for a user's seed, `U…` for its
/// public key): RFC 4648 base32 without padding over a prefix byte that names the kind of key,
/// the 32 key bytes and a CRC-16 (XMODEM, little-endian) of both.
///
/// A key pair is made from a seed, signs the server's nonce when connecting and shows only its
/// public key. `Sendable`.
public struct NATSNKeyPair: Sendable, Hashable, CustomStringConvertible {
    /// The public key, as the server's configuration lists it (`U…` for a user).
    public let publicKey: String
    private let signer: Ed25519Signer

    /// The key pair of `seed` (`SU…`, `SA…`, …; surrounding white space ignored).
    /// - Throws: ``NATSError`` `.connectionFailed` saying what is wrong with the seed (never
    ///   showing it), or that the system's Ed25519 is missing.
    public init(seed text: String) throws(NATSError) {
        let text = text.trimmingWhiteSpace
        guard let raw = NATSNKeyCoding.decode(text) else {
            throw .connectionFailed("the NKey seed is not valid: not base32 with a correct checksum")
        }
        guard raw.count == 34, raw[0] & 0xF8 == NATSNKeyCoding.seedPrefix else {
            throw .connectionFailed("the NKey is not a seed (a seed starts with S, for example SU… for a user)")
        }
        let kind = (raw[0] & 0x07) << 5 | (raw[1] & 0xF8) >> 3
        guard NATSNKeyCoding.publicPrefixes.contains(kind) else {
            throw .connectionFailed("the NKey seed names no known kind of key")
        }
        do throws(SystemCryptoError) {
            signer = try Ed25519Signer(seed: Array(raw[2...]))
        } catch {
            throw .connectionFailed("NKeys need Ed25519: \(error)")
        }
        publicKey = NATSNKeyCoding.encode([kind] + signer.publicKey)
    }

    /// The signature of the server's nonce as `CONNECT`'s `sig` wants it: base64url without padding.
    func signNonce(_ nonce: String) throws(NATSError) -> String {
        do throws(SystemCryptoError) {
            return NATSNKeyCoding.base64URL(try signer.sign(Array(nonce.utf8)))
        } catch {
            throw .connectionFailed("the nonce could not be signed: \(error)")
        }
    }

    /// Key pairs are equal when their public keys are (the public key follows from the seed).
    public static func == (lhs: NATSNKeyPair, rhs: NATSNKeyPair) -> Bool { lhs.publicKey == rhs.publicKey }

    public func hash(into hasher: inout Hasher) { hasher.combine(publicKey) }

    /// Shows the public key, never the seed.
    public var description: String { "NATSNKeyPair(\(publicKey))" }
}

/// The text encodings of NKeys.
enum NATSNKeyCoding {
    /// The prefix byte of a seed (`S`).
    static let seedPrefix: UInt8 = 18 << 3
    /// The prefix bytes of public keys: account (A), server (N), cluster (C), operator (O), user (U).
    static let publicPrefixes: Set<UInt8> = [0, 13 << 3, 2 << 3, 14 << 3, 20 << 3]
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// Base32 (no padding) of `payload` followed by its CRC-16.
    static func encode(_ payload: [UInt8]) -> String {
        let checksum = crc16(payload)
        let bytes = payload + [UInt8(checksum & 0xFF), UInt8(checksum >> 8)]
        var text: [UInt8] = []
        var buffer = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | Int(byte)
            bits += 8
            while bits >= 5 {
                text.append(alphabet[(buffer >> (bits - 5)) & 31])
                bits -= 5
            }
        }
        if bits > 0 { text.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes before the checksum, or nil when `text` is not base32 or the checksum is wrong.
    static func decode(_ text: String) -> [UInt8]? {
        var bytes: [UInt8] = []
        var buffer = 0
        var bits = 0
        for character in text.utf8 {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            buffer = (buffer << 5 | value) & 0xFFFF
            bits += 5
            if bits >= 8 {
                bytes.append(UInt8((buffer >> (bits - 8)) & 0xFF))
                bits -= 8
            }
        }
        // Bits left over past the last whole byte must be zero (else two texts would be one key).
        guard bytes.count > 2, buffer & ((1 << bits) - 1) == 0 else { return nil }
        let payload = Array(bytes[..<(bytes.count - 2)])
        let checksum = UInt16(bytes[bytes.count - 2]) | UInt16(bytes[bytes.count - 1]) << 8
        return crc16(payload) == checksum ? payload : nil
    }

    /// CRC-16/XMODEM (polynomial 0x1021, initial value 0).
    static func crc16(_ bytes: [UInt8]) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        }
        return crc
    }

    /// Base64url without padding (RFC 4648 section 5).
    static func base64URL(_ bytes: [UInt8]) -> String {
        let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var text: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for position in 0...chunk.count { text.append(table[(value >> (18 - 6 * position)) & 63]) }
            index += 3
        }
        return String(decoding: text, as: UTF8.self)
    }
}

extension String {
    var trimmingWhiteSpace: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[first...last])
    }
}
