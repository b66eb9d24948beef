import Foundation
import Herald
import HeraldServices

/// `post.<rule>.sent`: a post was made (or the service said it already had it).
public struct PostSent: Event, Hashable {
    /// The rule.
    public var rule: String
    /// The idempotency key of the intent.
    public var key: String
    /// The service posted to.
    public var service: String
    /// The new status's or object's id; nil when the service answered "duplicate" (the post
    /// was made before, e.g. by a run that crashed before recording it).
    public var id: String?
    /// Whether the service reported the post as a duplicate of one it already had.
    public var duplicate: Bool
    /// The correlation id of the event that caused the post.
    public var correlation: String?
    /// Requests it took (1 when the first one succeeded).
    public var attempts: Int

    public init(rule: String, key: String, service: String, id: String?, duplicate: Bool, correlation: String?, attempts: Int) {
        self.rule = rule
        self.key = key
        self.service = service
        self.id = id
        self.duplicate = duplicate
        self.correlation = correlation
        self.attempts = attempts
    }

    /// `post.<rule>.sent`.
    public var topic: Topic { PostTopics.topic(rule, "sent") }
}

/// `post.<rule>.failed`: a post given up (a permanent error, retries exhausted, a template
/// field missing from the event, a media file that breaks the limits).
public struct PostFailed: Event, Hashable {
    /// The rule.
    public var rule: String
    /// The idempotency key, when an intent was made.
    public var key: String?
    /// The service.
    public var service: String
    /// Why, in words.
    public var reason: String
    /// The HTTP status, when the service answered.
    public var status: Int?
    /// The correlation id of the triggering event.
    public var correlation: String?
    /// Requests made (0 when nothing was sent).
    public var attempts: Int

    public init(rule: String, key: String?, service: String, reason: String, status: Int? = nil, correlation: String?, attempts: Int) {
        self.rule = rule
        self.key = key
        self.service = service
        self.reason = reason
        self.status = status
        self.correlation = correlation
        self.attempts = attempts
    }

    /// `post.<rule>.failed`.
    public var topic: Topic { PostTopics.topic(rule, "failed") }
}

/// `post.<rule>.held`: the outbox refused an intent (a full disk, a file-size limit), so the post
/// is held in memory, unsent, while the scheduler retries the journal with backoff. A post is
/// never sent before its intent is in the outbox: sent unrecorded, a restart would post it
/// again. ``PostRecorded`` follows when the journal takes it.
public struct PostHeld: Event, Hashable {
    /// The rule.
    public var rule: String
    /// The idempotency key of the intent.
    public var key: String
    /// The service it is for.
    public var service: String
    /// The outbox journal.
    public var path: String
    /// Why the journal refused it (the system's words, e.g. "No space left on device").
    public var reason: String
    /// The correlation id of the triggering event.
    public var correlation: String?

    public init(rule: String, key: String, service: String, path: String, reason: String, correlation: String?) {
        self.rule = rule
        self.key = key
        self.service = service
        self.path = path
        self.reason = reason
        self.correlation = correlation
    }

    /// `post.<rule>.held`.
    public var topic: Topic { PostTopics.topic(rule, "held") }
}

/// `post.<rule>.recorded`: a held intent (``PostHeld``) is in the outbox at last; its post is
/// sent next.
public struct PostRecorded: Event, Hashable {
    /// The rule.
    public var rule: String
    /// The idempotency key of the intent.
    public var key: String
    /// The outbox journal.
    public var path: String
    /// Writes the journal refused before this one took (at least 1).
    public var refusals: Int
    /// The correlation id of the triggering event.
    public var correlation: String?

    public init(rule: String, key: String, path: String, refusals: Int, correlation: String?) {
        self.rule = rule
        self.key = key
        self.path = path
        self.refusals = refusals
        self.correlation = correlation
    }

    /// `post.<rule>.recorded`.
    public var topic: Topic { PostTopics.topic(rule, "recorded") }
}

/// `upload.<rule>.progress`: a step of a post's chunked media upload.
public struct PostUploadProgress: Event, Hashable {
    /// The rule.
    public var rule: String
    /// The post's idempotency key.
    public var key: String
    /// `initialized`, `uploading`, `processing` or `completed`.
    public var phase: String
    /// Bytes sent so far.
    public var bytesSent: Int
    /// The file's size.
    public var totalBytes: Int
    /// The service's processing progress, while it processes.
    public var processingPercent: Int?

    public init(rule: String, key: String, phase: String, bytesSent: Int, totalBytes: Int, processingPercent: Int?) {
        self.rule = rule
        self.key = key
        self.phase = phase
        self.bytesSent = bytesSent
        self.totalBytes = totalBytes
        self.processingPercent = processingPercent
    }

    /// `upload.<rule>.progress`.
    public var topic: Topic { (try? Topic(tokens: "upload", rule, "progress")) ?? Topic(stringLiteral: "upload.invalid.progress") }
}

/// The post scheduler's topics.
public enum PostTopics {
    /// `post.<rule>.<what>`.
    public static func topic(_ rule: String, _ what: String) -> Topic {
        (try? Topic(tokens: "post", rule, what)) ?? Topic(stringLiteral: "post.invalid.\(what)")
    }

    /// Whether `name` can be a rule name: one topic token of letters, digits, `-` and `_`.
    public static func isValidRuleName(_ name: String) -> Bool {
        !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }
}
