/// RFC 3986 percent-encoding as OAuth 1.0a (RFC 5849 §3.6) and Twitter require it.
///
/// Only the unreserved characters `A–Z a–z 0–9 - . _ ~` stay as they are; every other UTF-8
/// byte becomes `%XX` with uppercase hex. A space is `%20`, never `+`.
public enum PercentEncoding {
    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// Whether `byte` is an RFC 3986 unreserved character.
    public static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// Percent-encodes every byte of `text` that is not unreserved.
    public static func encode(_ text: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Joins `pairs` as `k=v&k=v` with both sides encoded, in the given order.
    public static func formEncode(_ pairs: [(String, String)]) -> String {
        pairs.map { encode($0.0) + "=" + encode($0.1) }.joined(separator: "&")
    }

    /// Decodes `%XX` escapes (and, when `plusAsSpace`, `+` as a space); nil on a bad escape
    /// or invalid UTF-8.
    public static func decode(_ text: String, plusAsSpace: Bool = false) -> String? {
        var output: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let byte = bytes.popFirst() {
            if byte == UInt8(ascii: "%") {
                guard bytes.count >= 2, let high = hexValue(bytes.removeFirst()),
                    let low = hexValue(bytes.removeFirst())
                else { return nil }
                output.append(high << 4 | low)
            } else if plusAsSpace && byte == UInt8(ascii: "+") {
                output.append(UInt8(ascii: " "))
            } else {
                output.append(byte)
            }
        }
        return String(validating: output, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}
