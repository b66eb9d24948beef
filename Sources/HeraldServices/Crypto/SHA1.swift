/// SHA-1 (FIPS 180-4), written here because the package may not depend on a crypto library.
///
/// SHA-1 is used only inside HMAC-SHA1 for OAuth 1.0a request signing, where its collision
/// weakness does not matter. Do not use it for anything else.
public struct SHA1: Sendable {
    /// The digest length in bytes.
    public static let digestByteCount = 20
    /// The internal block length in bytes (needed by HMAC).
    public static let blockByteCount = 64

    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)
    private var buffer: [UInt8] = []
    private var totalBytes: UInt64 = 0

    /// Creates an empty hasher.
    public init() {
        buffer.reserveCapacity(Self.blockByteCount)
    }

    /// The digest of `bytes` in one call.
    public static func hash<Bytes: Sequence>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var hasher = SHA1()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Feeds more bytes to the hasher.
    public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        for byte in bytes {
            buffer.append(byte)
            totalBytes &+= 1
            if buffer.count == Self.blockByteCount {
                compress(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Pads the message and returns the 20-byte digest. The hasher should not be reused.
    public mutating func finalize() -> [UInt8] {
        let bitLength = totalBytes &* 8
        var tail = buffer
        tail.append(0x80)
        while tail.count % Self.blockByteCount != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) {
            tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        var offset = 0
        while offset < tail.count {
            compress(tail[offset..<offset + Self.blockByteCount])
            offset += Self.blockByteCount
        }
        buffer.removeAll()
        var digest: [UInt8] = []
        digest.reserveCapacity(Self.digestByteCount)
        for word in [state.0, state.1, state.2, state.3, state.4] {
            digest.append(UInt8(truncatingIfNeeded: word >> 24))
            digest.append(UInt8(truncatingIfNeeded: word >> 16))
            digest.append(UInt8(truncatingIfNeeded: word >> 8))
            digest.append(UInt8(truncatingIfNeeded: word))
        }
        return digest
    }

    private mutating func compress<Block: RandomAccessCollection>(_ block: Block)
    where Block.Element == UInt8, Block.Index == Int {
        var words = [UInt32](repeating: 0, count: 80)
        let base = block.startIndex
        for index in 0..<16 {
            let start = base + index * 4
            words[index] = UInt32(block[start]) << 24 | UInt32(block[start + 1]) << 16
                | UInt32(block[start + 2]) << 8 | UInt32(block[start + 3])
        }
        for index in 16..<80 {
            let mixed = words[index - 3] ^ words[index - 8] ^ words[index - 14] ^ words[index - 16]
            words[index] = mixed.rotatedLeft(by: 1)
        }
        var (a, b, c, d, e) = state
        for index in 0..<80 {
            let f: UInt32
            let k: UInt32
            switch index {
            case 0..<20: f = (b & c) | (~b & d); k = 0x5A82_7999
            case 20..<40: f = b ^ c ^ d; k = 0x6ED9_EBA1
            case 40..<60: f = (b & c) | (b & d) | (c & d); k = 0x8F1B_BCDC
            default: f = b ^ c ^ d; k = 0xCA62_C1D6
            }
            let temp = a.rotatedLeft(by: 5) &+ f &+ e &+ k &+ words[index]
            e = d
            d = c
            c = b.rotatedLeft(by: 30)
            b = a
            a = temp
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e)
    }
}

extension UInt32 {
    fileprivate func rotatedLeft(by count: UInt32) -> UInt32 {
        (self << count) | (self >> (32 - count))
    }
}
