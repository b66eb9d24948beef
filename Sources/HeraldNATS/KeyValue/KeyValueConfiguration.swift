/// A key-value bucket's settings: stored as the stream `KV_<bucket>` on the subjects
/// `$KV.<bucket>.>`. A value type, `Sendable`.
public struct KeyValueConfiguration: Sendable, Hashable {
    /// The bucket name (letters, digits, `-` and `_`).
    public var bucket: String
    /// How many revisions of each key are kept (1-64).
    public var history: Int
    /// How long a value lives after its last write (the stream's `max_age`); nil: forever.
    public var ttl: Duration?
    /// The replicas of the bucket's stream (1, 3 or 5 in a cluster).
    public var replicas: Int
    /// The largest value (-1 unlimited).
    public var maxValueSize: Int
    /// Where the stream is stored.
    public var storage: StreamConfiguration.Storage
    /// A description shown by tools.
    public var description: String?

    /// A bucket configuration; the defaults keep one revision forever on one replica, on disk.
    public init(bucket: String, history: Int = 1, ttl: Duration? = nil, replicas: Int = 1, maxValueSize: Int = -1,
                storage: StreamConfiguration.Storage = .file, description: String? = nil) {
        self.bucket = bucket
        self.history = history
        self.ttl = ttl
        self.replicas = replicas
        self.maxValueSize = maxValueSize
        self.storage = storage
        self.description = description
    }

    /// The stream configuration the bucket is (as the official clients make it: rollups on,
    /// deletes through markers, direct gets, new writes refused rather than old revisions lost).
    var streamConfiguration: StreamConfiguration {
        var config = StreamConfiguration(name: "KV_\(bucket)", subjects: ["$KV.\(bucket).>"], retention: .limits,
                                         storage: storage, replicas: replicas)
        config.description = description
        config.maxMessagesPerSubject = history
        config.maxBytes = -1
        config.maxMessageSize = maxValueSize
        config.maxAge = ttl ?? .zero
        // The duplicate window may not exceed max_age; two minutes otherwise, as the server's default.
        if let ttl, ttl > .zero, ttl < .seconds(120) { config.duplicateWindow = ttl } else { config.duplicateWindow = .seconds(120) }
        config.allowRollup = true
        config.denyDelete = true
        config.allowDirect = true
        config.discard = .new
        return config
    }
}

/// One revision of a key.
public struct KeyValueEntry: Sendable, Hashable {
    /// What the revision did.
    public enum Operation: String, Sendable, Hashable {
        /// Stored a value.
        case put = "PUT"
        /// Deleted the key (a marker; older revisions stay in the history).
        case delete = "DEL"
        /// Purged the key (a marker; older revisions are gone).
        case purge = "PURGE"
    }

    /// The bucket.
    public var bucket: String
    /// The key.
    public var key: String
    /// The value (empty for a delete or purge marker).
    public var value: [UInt8]
    /// The revision: the stream sequence of this write. Pass it to ``KeyValueBucket/update(_:value:revision:)``.
    public var revision: UInt64
    /// What the revision did.
    public var operation: Operation
}

/// Why a key-value operation was refused, beyond the JetStream error it came from.
public struct KeyValueError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of refusal this is.
    public enum Kind: String, Sendable, Hashable {
        /// The key is empty, or has characters keys may not have.
        case invalidKey
        /// ``KeyValueBucket/create(_:value:)`` found a live value.
        case keyExists
        /// The key's latest revision is not the one given (someone else wrote it).
        case wrongRevision
        /// The bucket name is not valid, or no such bucket exists.
        case bucketNotFound
    }

    /// What kind of refusal this is.
    public var kind: Kind
    /// A one-line explanation naming the bucket and key.
    public var message: String

    /// An error of `kind`.
    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    /// The kind and message.
    public var description: String { "key-value \(kind.rawValue): \(message)" }
}
