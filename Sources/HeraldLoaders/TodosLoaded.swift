import Herald
import HeraldServices

/// `loader.<id>.finished` from a ``TodoLoader``: the bucket sorted by `updatedAt`, what appeared
/// and what disappeared since the previous load.
public struct TodosLoaded: Event, Hashable {
    /// The loader's id.
    public var loader: String
    /// The bucket.
    public var bucket: String
    /// Every object, oldest `updatedAt` first.
    public var todos: [BaaSObject]
    /// The objects whose ids were not there at the previous load.
    public var newTodos: [BaaSObject]
    /// The ids there at the previous load and gone now.
    public var removedIDs: [String]

    /// Creates the event.
    public init(loader: String, bucket: String, todos: [BaaSObject], newTodos: [BaaSObject], removedIDs: [String]) {
        self.loader = loader
        self.bucket = bucket
        self.todos = todos
        self.newTodos = newTodos
        self.removedIDs = removedIDs
    }

    /// `loader.<id>.finished`.
    public var topic: Topic { LoaderTopics.topic(loader, "finished") }
}
