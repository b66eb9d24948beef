import Foundation

/// The mutable world of the Mastodon emulator: the timeline (grown from the same fixtures and
/// on the same beat as the Twitter-style one), posted statuses, uploads, idempotency keys and
/// the rate-limit window. A value type, mutated only under the emulator's lock.
struct MastodonState: Sendable {
    struct StoredStatus: Sendable {
        var id: UInt64
        var createdAt: Date
        var text: String
        var author: MastodonFixtures.Person
        var visibility: String
        var spoiler: String
        var language: String?
        var tags: [String]
        var emoji: Bool
        var link: Bool
        var mediaIDs: [String]
        var inReplyTo: String?
        var posted: Bool
        var idempotencyKey: String?
    }

    struct Media: Sendable {
        var id: String
        var type: String
        var mimeType: String
        var size: Int
        var description: String?
        /// Polls left before processed; nil: never processed.
        var pollsLeft: Int?
        var data: Data?
        var attached = false
        var processed: Bool { pollsLeft == 0 }
    }

    var statuses: [StoredStatus] = []
    var generatedCount = 0
    var nextStatusID: UInt64 = 109_372_843_234_591_122
    var media: [String: Media] = [:]
    var nextMediaID: UInt64 = 110_000_000_000_000_001
    var keys: [String: (statusID: UInt64, at: Date)] = [:]
    var windowStart: Date?
    var windowUsed = 0

    /// Appends the statuses that should exist by `now`: `initial` at `start`, then one per
    /// `interval` seconds (the Twitter-style timeline's pace and texts).
    mutating func grow(now: Date, start: Date, initial: Int, interval: TimeInterval) {
        let elapsed = max(0, now.timeIntervalSince(start))
        let beats = interval > 0 && elapsed.isFinite ? min(1_000_000, (elapsed / interval).rounded(.down)) : 0
        let target = max(0, initial) + Int(beats)
        while generatedCount < target {
            let index = generatedCount
            let created = index < initial
                ? start.addingTimeInterval(Double(index - initial) * 60)
                : start.addingTimeInterval(Double(index - initial + 1) * interval)
            var tags = ["herald"]
            if index % 3 == 0 { tags.append("sandbox") }
            append(StoredStatus(
                id: 0, createdAt: created, text: TimelineFixtures.text(at: index), author: MastodonFixtures.person(at: index),
                visibility: "public", spoiler: index % 7 == 5 ? "sandbox spoiler" : "", language: index % 2 == 1 ? "ja" : "en",
                tags: tags, emoji: index % 4 == 1, link: index % 5 == 2, mediaIDs: [], inReplyTo: nil, posted: false))
            generatedCount += 1
        }
    }

    /// Stores a status under the next id (ids only grow) and returns it.
    @discardableResult
    mutating func append(_ status: StoredStatus) -> StoredStatus {
        var stored = status
        stored.id = nextStatusID
        nextStatusID &+= 65_536 + UInt64(statuses.count % 11)
        statuses.append(stored)
        return stored
    }
}

/// The accounts of the Mastodon emulator: the Twitter-style fixtures' people, some local and
/// some on other servers, and the signed-in user.
enum MastodonFixtures {
    struct Person: Sendable, Hashable {
        var id: String
        var username: String
        var domain: String?
        var displayName: String
        var acct: String { domain.map { "\(username)@\($0)" } ?? username }
        var isLocal: Bool { domain == nil }
    }

    static let people: [Person] = TimelineFixtures.people.enumerated().map { index, person in
        // Every other one lives on another server: the local timeline holds the rest.
        Person(id: String(index + 1), username: person.screenName, domain: index % 2 == 0 ? "remote.example" : nil,
               displayName: person.name + (index == 2 ? " :herald:" : ""))
    }

    static let me = Person(id: "100", username: "herald_sandbox", domain: nil, displayName: "Herald Sandbox")

    static func person(at index: Int) -> Person {
        people[index % people.count]
    }
}
