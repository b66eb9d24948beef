import Foundation

/// A JetStream key-value bucket: each key is the subject `$KV.<bucket>.<key>` of the stream
/// `KV_<bucket>`, its revisions are that subject's messages, and writes can be made conditional
/// on the latest revision (`Nats-Expected-Last-Subject-Sequence`), which is what a lease needs.
/// `Sendable`.
public struct KeyValueBucket: Sendable {
    /// The bucket name.
    public let bucket: String
    /// The stream that stores it.
    public let streamName: String
    /// The context it uses.
    public let jetStream: JetStreamContext
    let allowDirect: Bool

    init(bucket: String, jetStream: JetStreamContext, allowDirect: Bool) {
        self.bucket = bucket
        streamName = "KV_\(bucket)"
        self.jetStream = jetStream
        self.allowDirect = allowDirect
    }

    /// The latest live value of `key`; nil when the key was never written, or deleted or purged.
    public func get(_ key: String) async throws -> KeyValueEntry? {
        guard let entry = try await entry(key), entry.operation == .put else { return nil }
        return entry
    }

    /// The latest revision of `key`, delete and purge markers included; nil when never written.
    public func entry(_ key: String) async throws -> KeyValueEntry? {
        try Self.validate(key: key)
        let subject = "$KV.\(bucket).\(key)"
        let body = Array("{\"last_by_subj\":\"\(subject)\"}".utf8)
        if allowDirect {
            let reply = try await jetStream.request("\(jetStream.apiPrefix).DIRECT.GET.\(streamName)", payload: body)
            if reply.status == 404 { return nil }
            if let status = reply.status, status >= 300 {
                throw JetStreamError(code: status, errorCode: 0, description: reply.headers?.statusDescription ?? "status \(status)",
                                     subject: "\(jetStream.apiPrefix).DIRECT.GET.\(streamName)")
            }
            guard let sequence = reply.headers?["Nats-Sequence"].flatMap({ UInt64($0) }) else {
                throw NATSError.invalidResponse("the direct get of '\(subject)' has no Nats-Sequence header")
            }
            return KeyValueEntry(bucket: bucket, key: key, value: reply.payload, revision: sequence,
                                 operation: Self.operation(reply.headers))
        }
        struct Stored: Decodable {
            struct Message: Decodable {
                var seq: UInt64
                var hdrs: String?
                var data: String?
            }
            var message: Message
        }
        do {
            let stored: Stored = try await jetStream.api("STREAM.MSG.GET.\(streamName)", body: ["last_by_subj": subject])
            var headers: NATSHeaders?
            if let encoded = stored.message.hdrs, let data = Data(base64Encoded: encoded) {
                headers = try? NATSHeaders.parse(Array(data)[...])
            }
            let value = stored.message.data.flatMap { Data(base64Encoded: $0) }.map { Array($0) } ?? []
            return KeyValueEntry(bucket: bucket, key: key, value: value, revision: stored.message.seq, operation: Self.operation(headers))
        } catch let error as JetStreamError where error.errorCode == JetStreamError.noMessageFound {
            return nil
        }
    }

    /// Writes `value` whatever the key holds; returns the new revision.
    @discardableResult
    public func put(_ key: String, value: [UInt8]) async throws -> UInt64 {
        try Self.validate(key: key)
        return try await jetStream.publish("$KV.\(bucket).\(key)", payload: value).sequence
    }

    /// Writes `value` only if the key has no live value (never written, or deleted/purged);
    /// returns the new revision.
    /// - Throws: ``KeyValueError`` `.keyExists` when it has one.
    @discardableResult
    public func create(_ key: String, value: [UInt8]) async throws -> UInt64 {
        do {
            return try await update(key, value: value, revision: 0)
        } catch let error as KeyValueError where error.kind == .wrongRevision {
            // A delete or purge marker is a revision too: creating over it is an update of it.
            if let latest = try await entry(key), latest.operation != .put {
                return try await update(key, value: value, revision: latest.revision)
            }
            throw KeyValueError(kind: .keyExists, message: "the key '\(key)' of the bucket '\(bucket)' already has a value")
        }
    }

    /// Writes `value` only if `revision` is still the key's latest (0: the key has no revision);
    /// returns the new revision.
    /// - Throws: ``KeyValueError`` `.wrongRevision` when another write came first.
    @discardableResult
    public func update(_ key: String, value: [UInt8], revision: UInt64) async throws -> UInt64 {
        try Self.validate(key: key)
        return try await conditional(key, value: value, headers: nil, revision: revision)
    }

    /// Deletes the key (a marker; the history stays), if `revision` is its latest when given.
    public func delete(_ key: String, revision: UInt64? = nil) async throws {
        try Self.validate(key: key)
        var headers = NATSHeaders()
        headers["KV-Operation"] = "DEL"
        _ = try await conditional(key, value: [], headers: headers, revision: revision)
    }

    /// Purges the key: a marker replaces its whole history (`Nats-Rollup: sub`).
    public func purge(_ key: String, revision: UInt64? = nil) async throws {
        try Self.validate(key: key)
        var headers = NATSHeaders()
        headers["KV-Operation"] = "PURGE"
        headers["Nats-Rollup"] = "sub"
        _ = try await conditional(key, value: [], headers: headers, revision: revision)
    }

    /// The bucket's stream, for its configuration and counts.
    public func info() async throws -> StreamInfo {
        try await jetStream.streamInfo(streamName)
    }

    private func conditional(_ key: String, value: [UInt8], headers: NATSHeaders?, revision: UInt64?) async throws -> UInt64 {
        do {
            return try await jetStream.publish("$KV.\(bucket).\(key)", payload: value, headers: headers,
                                               options: JetStreamPublishOptions(expectedLastSubjectSequence: revision)).sequence
        } catch let error as JetStreamError where error.errorCode == JetStreamError.wrongLastSequence {
            throw KeyValueError(kind: .wrongRevision, message: "the key '\(key)' of the bucket '\(bucket)' is not at revision \(revision ?? 0): \(error.errorDescription)")
        }
    }

    private static func operation(_ headers: NATSHeaders?) -> KeyValueEntry.Operation {
        headers?["KV-Operation"].flatMap { KeyValueEntry.Operation(rawValue: $0) } ?? .put
    }

    /// Keys are subject tokens joined by dots: `[-/_=.a-zA-Z0-9]`, not starting or ending with a dot.
    static func validate(key: String) throws(KeyValueError) {
        let allowed = key.utf8.allSatisfy { byte in
            (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "=") || byte == UInt8(ascii: ".")
        }
        guard !key.isEmpty, allowed, !key.hasPrefix("."), !key.hasSuffix("."), !key.contains("..") else {
            throw KeyValueError(kind: .invalidKey, message: "the key '\(key)' is empty or has characters other than letters, digits and -/_=.")
        }
    }
}

extension JetStreamContext {
    /// Creates the bucket if absent (an identical existing bucket is bound as it is).
    /// - Throws: ``JetStreamError`` ``JetStreamError/streamNameInUse`` when the bucket exists with
    ///   other settings (history, TTL, replicas), ``KeyValueError`` `.bucketNotFound` for a bad name.
    public func createKeyValue(_ config: KeyValueConfiguration) async throws -> KeyValueBucket {
        try Self.validate(bucket: config.bucket)
        guard (1...64).contains(config.history) else {
            throw NATSError.invalidConfiguration("the history of the bucket '\(config.bucket)' must be 1-64, not \(config.history)")
        }
        let info = try await createStream(config.streamConfiguration)
        return KeyValueBucket(bucket: config.bucket, jetStream: self, allowDirect: info.config.allowDirect ?? false)
    }

    /// Binds an existing bucket.
    /// - Throws: ``KeyValueError`` `.bucketNotFound` when there is none.
    public func keyValue(_ bucket: String) async throws -> KeyValueBucket {
        try Self.validate(bucket: bucket)
        do {
            let info = try await streamInfo("KV_\(bucket)")
            return KeyValueBucket(bucket: bucket, jetStream: self, allowDirect: info.config.allowDirect ?? false)
        } catch let error as JetStreamError where error.errorCode == JetStreamError.streamNotFound {
            throw KeyValueError(kind: .bucketNotFound, message: "there is no bucket '\(bucket)' (no stream KV_\(bucket))")
        }
    }

    static func validate(bucket: String) throws(KeyValueError) {
        let allowed = bucket.utf8.allSatisfy { byte in
            (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
        guard !bucket.isEmpty, allowed else {
            throw KeyValueError(kind: .bucketNotFound, message: "the bucket name '\(bucket)' is empty or has characters other than letters, digits, - and _")
        }
    }
}
