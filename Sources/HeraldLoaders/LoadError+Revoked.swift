import HeraldServices

extension LoadError {
    /// The kind of a load refused because the service no longer accepts the loader's
    /// credentials (a revoked or invalid token): asking again cannot help.
    public static let unauthorizedKind = "unauthorized"

    /// Whether the loader stops after this failure: its schedule makes no further loads until
    /// the daemon is restarted (with a valid token), instead of retrying a refusal.
    public var stopsLoader: Bool { kind == Self.unauthorizedKind }
}
