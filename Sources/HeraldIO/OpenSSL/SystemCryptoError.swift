/// Why the system's cryptography is not available.
public struct SystemCryptoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, naming the library and the symbol.
    public var description: String

    /// An error saying `description`.
    public init(_ description: String) {
        self.description = description
    }
}
