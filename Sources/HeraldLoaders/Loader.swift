import Herald

/// A loader: one service call per ``load()``, announced on the bus.
///
/// An implementation must guarantee that one `load()` makes at most one HTTP exchange and
/// publishes exactly one `loader.<id>.finished` or `loader.<id>.failed` event, and that a
/// `load()` made while another is running joins it instead of starting a second request.
/// Problems with the loader's own state file are announced separately
/// (`loader.<id>.state.corrupt`, `loader.<id>.state.unwritable`).
public protocol Loader: Actor {
    /// The loader's id: a topic token (`home`, `images`).
    nonisolated var id: String { get }
    /// Loads once (or joins the load in progress) and returns how it ended.
    func load() async -> LoadOutcome
}

extension Loader {
    /// The sender its events carry: `loader.<id>`.
    public nonisolated var sender: Sender { Sender("loader.\(id)") }
}

/// Topic helpers for loader events.
public enum LoaderTopics {
    /// `loader.<id>.<suffix>`; ids are checked by the loaders' initialisers, so a bad one
    /// only reaches here through a decoded event and falls back to `loader.invalid.<suffix>`.
    public static func topic(_ id: String, _ suffix: String) -> Topic {
        (try? Topic(tokens: "loader", id, suffix)) ?? Topic(stringLiteral: "loader.invalid.\(suffix)")
    }

    /// Checks that `id` can be a topic token.
    public static func validate(id: String) throws(LoaderSetupError) {
        guard !id.contains("."), (try? Topic(tokens: "loader", id, "finished")) != nil else { throw LoaderSetupError.invalidID(id) }
    }
}

/// Why a loader could not be created.
public enum LoaderSetupError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The id cannot be a topic token.
    case invalidID(String)

    /// A readable explanation.
    public var description: String {
        switch self {
        case .invalidID(let id): "\"\(id)\" is not a valid loader id (letters, digits, - and _ only)"
        }
    }
}
