import Foundation

/// Writes an `Encodable` value as JSON straight into a byte buffer, as `JSONEncoder` (with
/// `.withoutEscapingSlashes` and ISO 8601 millisecond dates) would, without building a tree:
/// the same values, members in the order they were encoded (a key encoded twice is written
/// twice, where `JSONEncoder` keeps the last).
///
/// The file sink's fast path for events. It streams: a container is closed when its parent
/// writes again, which is how synthesized (and nearly every hand-written) `encode(to:)` behave.
/// Whatever it cannot reproduce exactly throws ``Unsupported``, and the caller falls back to
/// `JSONEncoder`: a container written to after it was closed, `superEncoder`, `Data`,
/// `Decimal`, non-finite floats, and any error the value itself throws. Its encoders report an
/// empty `codingPath` and `userInfo` (the sink's `JSONEncoder` sets no `userInfo`; a path is
/// only needed for error messages, and an error sends the value to `JSONEncoder`, which has
/// one). Not thread-safe: one writer per ``EnvelopeLineEncoder``.
final class EventJSONWriter {
    /// The value cannot be written here; encode it with `JSONEncoder` instead.
    struct Unsupported: Error {}

    /// An open object or array.
    struct Frame {
        var id: Int
        var isObject: Bool
        var count = 0
        /// The encoder that opened it, which may ask for it again.
        var slot: Int
    }

    var bytes: [UInt8] = []
    private var stack: [Frame] = []
    private var nextID = 0
    /// The encoder whose value is due; -1 when none.
    private var pendingSlot = -1
    /// Set where the `Encoder` API cannot throw (`superEncoder`, a container asked of an encoder
    /// that is done), and on every refusal: a value may swallow the error (`try?`) and go on,
    /// and the line must still end in the fallback.
    var unsupported = false

    /// Marks the value unsupported and returns the error to throw.
    private func refuse() -> Unsupported {
        unsupported = true
        return Unsupported()
    }

    /// Appends `value`'s JSON to `line`.
    ///
    /// - Throws: ``Unsupported`` (or the value's own error), after which `line` holds a partial
    ///   value the caller must cut off.
    func write<T: Encodable>(_ value: T, to line: inout [UInt8]) throws {
        swap(&bytes, &line)
        defer { swap(&bytes, &line) }
        stack.removeAll(keepingCapacity: true)
        pendingSlot = -1
        unsupported = false
        try encodeValue(value)
        close(above: -1)
        if unsupported { throw Unsupported() }
    }

    // MARK: Values

    func encodeValue<T: Encodable>(_ value: T) throws {
        if T.self == Date.self, let date = value as? Date {
            // The same formatter as the sink's JSONEncoder strategy, so the text is identical.
            appendString(Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date))
        } else if T.self == URL.self, let url = value as? URL {
            appendString(url.absoluteString)
        } else if T.self == Data.self || T.self == Decimal.self {
            throw refuse()
        } else {
            nextID += 1
            let slot = nextID
            pendingSlot = slot
            do {
                try value.encode(to: SlotEncoder(writer: self, slot: slot))
            } catch {
                unsupported = true
                throw error
            }
            if pendingSlot == slot {
                // A value that encoded nothing: JSONEncoder writes an empty object.
                pendingSlot = -1
                bytes += "{}".utf8
            }
        }
    }

    func appendString(_ text: String) {
        JSONString.append(text, to: &bytes)
    }

    func appendInteger<I: BinaryInteger>(_ value: I) {
        if value == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        var magnitude = value.magnitude
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        let start = bytes.count
        while magnitude > 0 {
            let (quotient, digit) = magnitude.quotientAndRemainder(dividingBy: 10)
            bytes.append(UInt8(ascii: "0") + UInt8(digit))
            magnitude = quotient
        }
        bytes[start...].reverse()
    }

    func appendFloat<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: F) throws {
        // JSONEncoder's default strategy throws on these; let it, with its message.
        guard value.isFinite else { throw refuse() }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes += text.utf8
    }

    func appendBool(_ value: Bool) {
        bytes += (value ? "true" : "false").utf8
    }

    func appendNull() {
        bytes += "null".utf8
    }

    // MARK: Frames

    /// Opens a container for the encoder `slot`: a new one when its value is due, the one it
    /// opened before when that is still open; otherwise marks the value unsupported (-1).
    func open(slot: Int, isObject: Bool) -> Int {
        if slot == pendingSlot {
            pendingSlot = -1
            nextID += 1
            bytes.append(isObject ? UInt8(ascii: "{") : UInt8(ascii: "["))
            stack.append(Frame(id: nextID, isObject: isObject, slot: slot))
            return nextID
        }
        if let frame = stack.last(where: { $0.slot == slot }), frame.isObject == isObject { return frame.id }
        unsupported = true
        return -1
    }

    /// Opens a container nested in `parent`'s next element or key.
    func openNested(in parent: Int, key: String?, isObject: Bool) -> Int {
        do {
            try begin(parent, key: key)
        } catch {
            unsupported = true
            return -1
        }
        nextID += 1
        let slot = nextID
        pendingSlot = slot
        return open(slot: slot, isObject: isObject)
    }

    /// Starts the next member of container `frame` (closing the finished containers above it):
    /// a comma if needed, then the key.
    func begin(_ frame: Int, key: String?) throws {
        // A value is due (its encoder wrote into another container instead), or the container
        // was closed: the stream cannot follow.
        guard pendingSlot == -1, let index = stack.lastIndex(where: { $0.id == frame }) else { throw refuse() }
        close(above: index)
        if stack[index].count > 0 { bytes.append(UInt8(ascii: ",")) }
        stack[index].count += 1
        if let key {
            appendString(key)
            bytes.append(UInt8(ascii: ":"))
        }
    }

    /// Starts the single value of the encoder `slot`.
    func beginSingle(_ slot: Int) throws {
        guard slot == pendingSlot else { throw refuse() }
        pendingSlot = -1
    }

    func count(of frame: Int) -> Int {
        stack.last(where: { $0.id == frame })?.count ?? 0
    }

    private func close(above index: Int) {
        while stack.count > index + 1 {
            let frame = stack.removeLast()
            bytes.append(frame.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
        }
    }
}
