import Foundation

// The `Encoder` face of ``EventJSONWriter``: small structs that name the writer and the
// container (frame) or value (slot) they write, so nothing is allocated per value but the
// containers' boxes.

/// The encoder handed to one value's `encode(to:)`.
struct SlotEncoder: Encoder {
    let writer: EventJSONWriter
    let slot: Int
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedWriter<Key>(writer: writer, frame: writer.open(slot: slot, isObject: true)))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedWriter(writer: writer, frame: writer.open(slot: slot, isObject: false))
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleWriter(writer: writer, slot: slot)
    }
}

struct KeyedWriter<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let writer: EventJSONWriter
    let frame: Int
    var codingPath: [any CodingKey] { [] }

    private func begin(_ key: Key) throws { try writer.begin(frame, key: key.stringValue) }

    mutating func encodeNil(forKey key: Key) throws { try begin(key); writer.appendNull() }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try begin(key); writer.appendBool(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { try begin(key); writer.appendString(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try begin(key); try writer.appendFloat(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try begin(key); try writer.appendFloat(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try begin(key); writer.appendInteger(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try begin(key); writer.appendInteger(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try begin(key); writer.appendInteger(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try begin(key); writer.appendInteger(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try begin(key); writer.appendInteger(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try begin(key); writer.appendInteger(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try begin(key); writer.appendInteger(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try begin(key); writer.appendInteger(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try begin(key); writer.appendInteger(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try begin(key); writer.appendInteger(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try begin(key); try writer.encodeValue(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        KeyedEncodingContainer(KeyedWriter<NestedKey>(
            writer: writer, frame: writer.openNested(in: frame, key: key.stringValue, isObject: true)))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        UnkeyedWriter(writer: writer, frame: writer.openNested(in: frame, key: key.stringValue, isObject: false))
    }

    mutating func superEncoder() -> any Encoder { unsupportedEncoder() }
    mutating func superEncoder(forKey key: Key) -> any Encoder { unsupportedEncoder() }

    private func unsupportedEncoder() -> any Encoder {
        writer.unsupported = true
        return SlotEncoder(writer: writer, slot: -2)
    }
}

struct UnkeyedWriter: UnkeyedEncodingContainer {
    let writer: EventJSONWriter
    let frame: Int
    var codingPath: [any CodingKey] { [] }
    var count: Int { writer.count(of: frame) }

    private func begin() throws { try writer.begin(frame, key: nil) }

    mutating func encodeNil() throws { try begin(); writer.appendNull() }
    mutating func encode(_ value: Bool) throws { try begin(); writer.appendBool(value) }
    mutating func encode(_ value: String) throws { try begin(); writer.appendString(value) }
    mutating func encode(_ value: Double) throws { try begin(); try writer.appendFloat(value) }
    mutating func encode(_ value: Float) throws { try begin(); try writer.appendFloat(value) }
    mutating func encode(_ value: Int) throws { try begin(); writer.appendInteger(value) }
    mutating func encode(_ value: Int8) throws { try begin(); writer.appendInteger(value) }
    mutating func encode(_ value: Int16) throws { try begin(); writer.appendInteger(value) }
    mutating func encode(_ value: Int32) throws { try begin(); writer.appendInteger(value) }
    mutating func encode(_ value: Int64) throws { try begin(); writer.appendInteger(value) }
    mutating func encode(_ value: UInt) throws { try begin(); writer.appendInteger(value) }
    mutating func encode(_ value: UInt8) throws { try begin(); writer.appendInteger(value) }
    mutating func encode(_ value: UInt16) throws { try begin(); writer.appendInteger(value) }
    mutating func encode(_ value: UInt32) throws { try begin(); writer.appendInteger(value) }
    mutating func encode(_ value: UInt64) throws { try begin(); writer.appendInteger(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try begin(); try writer.encodeValue(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(KeyedWriter<NestedKey>(writer: writer, frame: writer.openNested(in: frame, key: nil, isObject: true)))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedWriter(writer: writer, frame: writer.openNested(in: frame, key: nil, isObject: false))
    }

    mutating func superEncoder() -> any Encoder {
        writer.unsupported = true
        return SlotEncoder(writer: writer, slot: -2)
    }
}

struct SingleWriter: SingleValueEncodingContainer {
    let writer: EventJSONWriter
    let slot: Int
    var codingPath: [any CodingKey] { [] }

    private func begin() throws { try writer.beginSingle(slot) }

    mutating func encodeNil() throws { try begin(); writer.appendNull() }
    mutating func encode(_ value: Bool) throws { try begin(); writer.appendBool(value) }
    mutating func encode(_ value: String) throws { try begin(); writer.appendString(value) }
    mutating func encode(_ value: Double) throws { try begin(); try writer.appendFloat(value) }
    mutating func encode(_ value: Float) throws { try begin(); try writer.appendFloat(value) }
    mutating func encode(_ value: Int) throws { try begin(); writer.appendInteger(value) }
    mutating func encode(_ value: Int8) throws { try begin(); writer.appendInteger(value) }
    mutating func encode(_ value: Int16) throws { try begin(); writer.appendInteger(value) }
    mutating func encode(_ value: Int32) throws { try begin(); writer.appendInteger(value) }
    mutating func encode(_ value: Int64) throws { try begin(); writer.appendInteger(value) }
    mutating func encode(_ value: UInt) throws { try begin(); writer.appendInteger(value) }
    mutating func encode(_ value: UInt8) throws { try begin(); writer.appendInteger(value) }
    mutating func encode(_ value: UInt16) throws { try begin(); writer.appendInteger(value) }
    mutating func encode(_ value: UInt32) throws { try begin(); writer.appendInteger(value) }
    mutating func encode(_ value: UInt64) throws { try begin(); writer.appendInteger(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try begin(); try writer.encodeValue(value) }
}
