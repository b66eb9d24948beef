/// Why bytes could not be read as an MP4 (ISO base media) file, naming the box and offset.
///
/// A struct over a ``Kind`` like ``ServiceError``. ``MediaLimits`` turns it into a
/// `ServiceError.invalidRequest` carrying the same message, so upload callers see one error type.
public struct MP4Error: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem this is.
    public enum Kind: String, Sendable, Hashable {
        /// The bytes do not start with an `ftyp` box.
        case notMP4
        /// A box header or payload is cut short, or claims more bytes than its container holds.
        case truncated
        /// A box the summary needs is absent (`moov`, `mvhd`, a video track, its `stts`…).
        case missingBox
        /// A box holds a value that cannot be used (unknown version, zero timescale, overflow…).
        case invalidValue
        /// The file could not be read.
        case unreadable
    }

    /// What kind of problem this is.
    public var kind: Kind
    /// A one-line explanation naming the box and its byte offset.
    public var message: String
    /// The file offset of the box at fault, when there is one.
    public var offset: Int?

    /// Creates an error; prefer the static factories.
    public init(kind: Kind, message: String, offset: Int? = nil) {
        self.kind = kind
        self.message = message
        self.offset = offset
    }

    /// The bytes do not start with an `ftyp` box.
    public static func notMP4(_ reason: String) -> MP4Error {
        MP4Error(kind: .notMP4, message: "not an MP4 file: \(reason)", offset: 0)
    }

    /// Something at `offset` is cut short.
    public static func truncated(_ reason: String, at offset: Int) -> MP4Error {
        MP4Error(kind: .truncated, message: reason, offset: offset)
    }

    /// A needed box is absent.
    public static func missingBox(_ reason: String, at offset: Int? = nil) -> MP4Error {
        MP4Error(kind: .missingBox, message: reason, offset: offset)
    }

    /// A value at `offset` cannot be used.
    public static func invalidValue(_ reason: String, at offset: Int) -> MP4Error {
        MP4Error(kind: .invalidValue, message: reason, offset: offset)
    }

    /// The message.
    public var description: String { message }
}
