import Foundation

extension PostOutbox {
    /// What the journal at `path` says of each key, read only (nothing is compacted or set
    /// aside): `pending` for an intent not done yet, else its done record's result (`sent`,
    /// `failed`, …). A missing journal knows nothing; unreadable lines are skipped.
    package static func keyStates(atPath path: String) -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path) else { return [:] }
        let decoder = decoder()
        var states: [String: String] = [:]
        for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            guard let record = try? decoder.decode(Record.self, from: Data(line)) else { continue }
            switch record.op {
            case .intent: if states[record.key] == nil { states[record.key] = "pending" }
            case .done: states[record.key] = record.result ?? "done"
            }
        }
        return states
    }
}

extension PostScheduler {
    /// What the outbox journal at `path` says of each key, read only (see the outbox's
    /// `keyStates(atPath:)`): `pending`, `sent`, `failed`, ….
    package static func outboxKeyStates(atPath path: String) -> [String: String] {
        PostOutbox.keyStates(atPath: path)
    }
}
