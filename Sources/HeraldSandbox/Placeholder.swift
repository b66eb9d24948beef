/// Placeholder.
public enum SandboxPlaceholder {}
