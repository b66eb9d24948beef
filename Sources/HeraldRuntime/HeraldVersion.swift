/// Herald's version, as `herald --version` prints it.
public enum HeraldVersion {
    /// The version string.
    public static let current = "0.4.0"
}
