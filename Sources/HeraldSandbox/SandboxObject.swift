import Foundation

/// One object stored in a sandbox BaaS bucket, as ``Sandbox/objects(inBucket:)`` and
/// `GET /_sandbox/objects/{bucket}` show it.
public struct SandboxObject: Sendable, Hashable {
    /// The object's `_id`.
    public var id: String
    /// When it was created, by the sandbox's clock.
    public var createdAt: Date
    /// When it was last updated.
    public var updatedAt: Date
    /// The object exactly as the BaaS API renders it: JSON text with `_id`, `createdAt`,
    /// `updatedAt`, `etag`, `ACL` and the stored fields.
    public var json: String
    /// Whether the sandbox grew it itself (``SandboxConfiguration/todoInterval``) rather than
    /// a client creating it.
    public var isGenerated: Bool
}
