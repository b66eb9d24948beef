import Foundation

/// The mutable world of the Twitter-style emulator: the timeline, the rate-limit window,
/// uploads and posts. A value type, mutated only under the emulator's lock.
struct TwitterState: Sendable {
    struct StoredStatus: Sendable {
        var id: UInt64
        var createdAt: Date
        var text: String
        var author: TimelineFixtures.Person
        var inReplyTo: UInt64?
        var mediaIDs: [String]
        var posted: Bool
    }

    struct Upload: Sendable {
        var mediaType: String
        var category: String?
        var totalBytes: Int
        var segments: [Int: Int] = [:]
        var finalized = false
        var isVideo: Bool { mediaType.hasPrefix("video/") || category?.contains("video") == true }
        var pollsLeft = 0
        var failed = false
    }

    var statuses: [StoredStatus] = []
    var generatedCount = 0
    var nextStatusID: UInt64 = 1_050_118_621_198_921_728
    var windowStart: Date?
    var windowUsed = 0
    /// The X API v2 home timeline's own rate-limit window.
    var xWindowStart: Date?
    var xWindowUsed = 0
    var uploads: [String: Upload] = [:]
    var nextMediaID: UInt64 = 601_413_451_156_586_496

    /// Appends the statuses that should exist by `now`: `initial` at `start`, then one per
    /// `interval` seconds.
    mutating func grow(now: Date, start: Date, initial: Int, interval: TimeInterval) {
        let elapsed = max(0, now.timeIntervalSince(start))
        // Capped so an extreme configuration (a tiny interval, a far clock) cannot trap or
        // exhaust memory: at most a million generated statuses.
        let beats = interval > 0 && elapsed.isFinite ? min(1_000_000, (elapsed / interval).rounded(.down)) : 0
        let target = max(0, initial) + Int(beats)
        while generatedCount < target {
            let index = generatedCount
            // The initial statuses lie a minute apart before `start`; later ones appear on the beat.
            let created = index < initial
                ? start.addingTimeInterval(Double(index - initial) * 60)
                : start.addingTimeInterval(Double(index - initial + 1) * interval)
            append(StoredStatus(
                id: 0, createdAt: created, text: TimelineFixtures.text(at: index),
                author: TimelineFixtures.person(at: index), inReplyTo: nil, mediaIDs: [], posted: false))
            generatedCount += 1
        }
    }

    /// Stores a status under the next id (ids only grow) and returns it.
    @discardableResult
    mutating func append(_ status: StoredStatus) -> StoredStatus {
        var stored = status
        stored.id = nextStatusID
        nextStatusID &+= 4_096 + UInt64(statuses.count % 7)
        statuses.append(stored)
        return stored
    }
}
