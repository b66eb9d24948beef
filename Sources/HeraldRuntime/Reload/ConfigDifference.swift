import Foundation
import HeraldServices

/// What changed between the configuration a daemon runs and the one a reload read, judged on
/// the sections as written (``ConfigSource``): a loader, subscriber or service whose JSON is the
/// same is untouched, whatever else changed.
///
/// A loader or subscriber counts as changed when its own entry changed or when a service it
/// uses did (new URL or credentials). A changed loader keeps its state unless its identity
/// changed: its kind and request, its service's name or its service's URL (a new account or
/// server makes its seen ids meaningless). What a running daemon cannot change (`http`,
/// `sandbox`, `state`, `cluster`) is listed in ``needsRestart``.
public struct ConfigDifference: Sendable, Hashable {
    /// Loader ids and subscriber names, sorted.
    public var addedLoaders: [String] = []
    /// Loader ids that are gone.
    public var removedLoaders: [String] = []
    /// Loader ids whose settings or service changed.
    public var changedLoaders: [String] = []
    /// Changed loaders whose identity changed too: their state starts again.
    public var loadersWithNewIdentity: [String] = []
    /// Subscriber names added.
    public var addedSubscribers: [String] = []
    /// Subscriber names that are gone.
    public var removedSubscribers: [String] = []
    /// Subscriber names whose settings (or, for a post subscriber, a service of its rules) changed.
    public var changedSubscribers: [String] = []
    /// Services whose entry changed, was added or removed.
    public var changedServices: [String] = []
    /// Top-level sections that changed but apply only at the next start.
    public var needsRestart: [String] = []

    /// No difference.
    public init() {}

    /// Whether nothing differs.
    public var isEmpty: Bool { self == ConfigDifference() }

    /// The difference from `old` to `new`.
    public init(from old: HeraldConfiguration, to new: HeraldConfiguration) {
        let (before, after) = (old.source?.sections ?? [:], new.source?.sections ?? [:])
        for section in ["http", "sandbox", "state", "cluster"] where before[section] != after[section] {
            needsRestart.append(section)
        }
        let (oldServices, newServices) = (old.source?.entries("services") ?? [:], new.source?.entries("services") ?? [:])
        changedServices = Set(oldServices.keys).union(newServices.keys).filter { oldServices[$0] != newServices[$0] }.sorted()
        let touched = Set(changedServices)

        let (oldLoaders, newLoaders) = (old.source?.entries("loaders") ?? [:], new.source?.entries("loaders") ?? [:])
        addedLoaders = new.loaders.keys.filter { old.loaders[$0] == nil }.sorted()
        removedLoaders = old.loaders.keys.filter { new.loaders[$0] == nil }.sorted()
        for id in new.loaders.keys.sorted() {
            guard let was = old.loaders[id], let now = new.loaders[id] else { continue }
            guard oldLoaders[id] != newLoaders[id] || touched.contains(now.service) || touched.contains(was.service) else { continue }
            changedLoaders.append(id)
            let sameEndpoint = old.services[was.service]?.endpoint == new.services[now.service]?.endpoint
            if Self.identity(was.kind) != Self.identity(now.kind) || was.service != now.service || !sameEndpoint {
                loadersWithNewIdentity.append(id)
            }
        }

        let (oldSubscribers, newSubscribers) = (old.source?.entries("subscribers") ?? [:], new.source?.entries("subscribers") ?? [:])
        addedSubscribers = new.subscribers.keys.filter { old.subscribers[$0] == nil }.sorted()
        removedSubscribers = old.subscribers.keys.filter { new.subscribers[$0] == nil }.sorted()
        for name in new.subscribers.keys.sorted() {
            guard let was = old.subscribers[name], let now = new.subscribers[name] else { continue }
            let services = Self.services(of: was).union(Self.services(of: now))
            if oldSubscribers[name] != newSubscribers[name] || !services.isDisjoint(with: touched) { changedSubscribers.append(name) }
        }
    }

    /// What a loader reads, for its identity: a feed is its location; its `caFile` / `insecure`
    /// say how it is verified and its `timeout` / `maxBytes` how it is fetched, not which feed it
    /// is, so changing them keeps the seen ids (resetting them would announce the whole feed
    /// again).
    private static func identity(_ kind: LoaderConfiguration.Kind) -> LoaderConfiguration.Kind {
        guard case .feed(let feed) = kind else { return kind }
        return .feed(FeedSettings(location: feed.location))
    }

    private static func services(of subscriber: SubscriberConfiguration) -> Set<String> {
        if case .post(let posting) = subscriber { Set(posting.rules.map(\.service)) } else { [] }
    }

    /// One line per change, for the log and `herald reload`: `loaders.home: changed (state kept)`.
    public var lines: [String] {
        var lines: [String] = []
        lines += addedLoaders.map { "loaders.\($0): added" }
        lines += removedLoaders.map { "loaders.\($0): removed" }
        lines += changedLoaders.map { id in
            "loaders.\(id): changed (" + (loadersWithNewIdentity.contains(id) ? "new identity: its state starts again" : "state kept") + ")"
        }
        lines += addedSubscribers.map { "subscribers.\($0): added" }
        lines += removedSubscribers.map { "subscribers.\($0): removed" }
        lines += changedSubscribers.map { "subscribers.\($0): changed" }
        lines += changedServices.map { "services.\($0): changed" }
        lines += needsRestart.map { "\($0): changed, but applies only at the next start (restart herald)" }
        return lines
    }
}
