import Herald

/// Pieces the three loaders share.
enum LoaderSupport {
    /// Reads a loader's state file once, announcing a corrupt one on the bus.
    static func readState(id: String, store: any LoaderStateStorage, bus: EventBus, sender: Sender) async -> LoaderState {
        switch await store.load(id) {
        case .missing:
            return LoaderState()
        case .loaded(let state):
            return state
        case .corrupt(let path, let movedTo, let reason):
            let event = LoaderStateSetAside(loader: id, path: path, movedTo: movedTo, reason: reason)
            _ = try? await bus.publish(event, from: sender)
            return LoaderState()
        }
    }

    /// Writes a loader's state; the event to announce when that failed.
    static func write(_ state: LoaderState, id: String, to store: any LoaderStateStorage) async -> LoaderStateUnwritable? {
        do {
            try await store.save(state, for: id)
            return nil
        } catch {
            return LoaderStateUnwritable(loader: id, directory: store.location, reason: error.description)
        }
    }

    /// Publishes a loader's one event; false when the bus refused it (it is shutting down).
    @discardableResult
    static func announce<E: Event>(_ event: E, on bus: EventBus, from sender: Sender) async -> Bool {
        (try? await bus.publish(event, from: sender)) != nil
    }

    /// Whether status id `candidate` is newer than `marker` (ids are decimal strings beyond 2^53).
    static func isNewer(_ candidate: String, than marker: String?) -> Bool {
        guard let marker else { return true }
        let digits = { (text: String) in !text.isEmpty && text.allSatisfy(\.isASCII) && text.allSatisfy(\.isNumber) }
        guard digits(candidate), digits(marker) else { return candidate != marker }
        let a = candidate.drop { $0 == "0" }, b = marker.drop { $0 == "0" }
        return a.count != b.count ? a.count > b.count : a > b
    }

    /// The newest of `ids` and `marker`.
    static func newest(_ ids: [String], marker: String?) -> String? {
        ids.reduce(marker) { best, id in isNewer(id, than: best) ? id : best }
    }
}
