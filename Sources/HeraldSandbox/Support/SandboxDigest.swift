/// The sandbox's own SHA-1 and HMAC-SHA1, written independently of HeraldServices so that
/// the OAuth check is a second implementation, not a mirror of the client's.
enum SandboxDigest {
    static func sha1(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var padded = message
        padded.append(0x80)
        padded.append(contentsOf: [UInt8](repeating: 0, count: (119 - message.count % 64) % 64))
        let bits = UInt64(message.count) * 8
        padded.append(contentsOf: (0..<8).reversed().map { UInt8(truncatingIfNeeded: bits >> (UInt64($0) * 8)) })
        var w = [UInt32](repeating: 0, count: 80)
        for chunk in stride(from: 0, to: padded.count, by: 64) {
            for i in 0..<16 {
                w[i] = (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(padded[chunk + i * 4 + $1]) }
            }
            for i in 16..<80 {
                let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
                w[i] = x << 1 | x >> 31
            }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32) =
                    i < 20 ? ((b & c) | (~b & d), 0x5A82_7999)
                    : i < 40 ? (b ^ c ^ d, 0x6ED9_EBA1)
                    : i < 60 ? ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                    : (b ^ c ^ d, 0xCA62_C1D6)
                let t = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, t)
            }
            h[0] &+= a; h[1] &+= b; h[2] &+= c; h[3] &+= d; h[4] &+= e
        }
        return h.flatMap { word in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> UInt32($0)) } }
    }

    static func hmacSHA1(key: [UInt8], message: [UInt8]) -> [UInt8] {
        let shortKey = key.count > 64 ? sha1(key) : key
        let block = shortKey + [UInt8](repeating: 0, count: 64 - shortKey.count)
        let inner = sha1(block.map { $0 ^ 0x36 } + message)
        return sha1(block.map { $0 ^ 0x5C } + inner)
    }
}
