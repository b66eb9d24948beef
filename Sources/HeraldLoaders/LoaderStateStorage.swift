import HeraldIO
/// Where a loader reads its ``LoaderState`` before its first load and saves it after each
/// successful one: files on this machine (``LoaderStateStore``), or, for a daemon in a cluster,
/// a key-value bucket every node shares.
///
/// An implementation must guarantee that ``save(_:for:)`` returns only once the state is stored
/// (a later ``load(_:)``, in this process or after a restart, reads it), and that it throws
/// instead when the state cannot or must not be stored (the loader then reports
/// `loader.<id>.state.unwritable` once and keeps the state in memory). A storage may refuse a
/// save on purpose: a file store while post intents are held, a cluster's store once this node
/// no longer holds the loader's lease.
public protocol LoaderStateStorage: Sendable {
    /// Reads loader `id`'s state; a missing one is ``LoaderStateStore/ReadResult/missing``, one
    /// that cannot be trusted is set aside and reported as ``LoaderStateStore/ReadResult/corrupt(path:movedTo:reason:)``.
    func load(_ id: String) async -> LoaderStateStore.ReadResult
    /// Stores loader `id`'s state.
    ///
    /// - Throws: ``LoaderStateStoreError`` saying what was refused, where, and why.
    func save(_ state: LoaderState, for id: String) async throws(LoaderStateStoreError)
    /// Where states are kept, as `loader.<id>.state.unwritable` names it (a directory, a bucket).
    var location: String { get }
    /// Whether a load of loader `id` that just got its answer may still announce it. Always
    /// true on one machine; a cluster node answers whether it still holds the loader's lease,
    /// so a node paused (or cut off) while its request was out announces nothing once another
    /// node holds the loader: that node loads the same items itself.
    func mayAnnounce(_ id: String) -> Bool
}

extension LoaderStateStorage {
    /// True: a store on one machine never stops a load from announcing.
    public func mayAnnounce(_ id: String) -> Bool { true }
}

extension LoaderStateStorage where Self == LoaderStateStore {
    /// A store that keeps nothing (its I/O thread never starts: there is nothing to write).
    public static var none: LoaderStateStore { LoaderStateStore(directory: nil, io: BlockingIOThread(name: "herald.state-io.none")) }
}
