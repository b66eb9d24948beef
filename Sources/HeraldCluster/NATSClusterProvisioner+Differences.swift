import HeraldNATS

/// What differs between the settings a node wants and what the server has, in words
/// (`replicas 3 (this node wants 1)`).
extension NATSClusterProvisioner {
    static func differences(_ wanted: StreamConfiguration, _ found: StreamConfiguration) -> [String] {
        var differences: [String] = []
        compare("subjects", Set(wanted.subjects ?? []), Set(found.subjects ?? []), { $0.sorted().joined(separator: " ") }, into: &differences)
        compare("retention", wanted.retention ?? .limits, found.retention ?? .limits, { $0.rawValue }, into: &differences)
        compare("replicas", wanted.replicas ?? 1, found.replicas ?? 1, { "\($0)" }, into: &differences)
        compare("max age", wanted.maxAge ?? .zero, found.maxAge ?? .zero, words, into: &differences)
        compare("dedupe window", wanted.duplicateWindow ?? .seconds(120), found.duplicateWindow ?? .seconds(120), words, into: &differences)
        return differences
    }

    static func differences(_ wanted: KeyValueConfiguration, _ found: StreamConfiguration) -> [String] {
        var differences: [String] = []
        compare("subjects", ["$KV.\(wanted.bucket).>"], Set(found.subjects ?? []), { $0.sorted().joined(separator: " ") }, into: &differences)
        compare("TTL", wanted.ttl ?? .zero, found.maxAge ?? .zero, words, into: &differences)
        compare("replicas", wanted.replicas, found.replicas ?? 1, { "\($0)" }, into: &differences)
        compare("history", wanted.history, found.maxMessagesPerSubject ?? -1, { "\($0)" }, into: &differences)
        return differences
    }

    static func differences(_ wanted: ConsumerConfiguration, _ found: ConsumerConfiguration) -> [String] {
        var differences: [String] = []
        compare("ack policy", wanted.ackPolicy ?? .explicit, found.ackPolicy ?? .explicit, { $0.rawValue }, into: &differences)
        if let ackWait = wanted.ackWait { compare("ack wait", ackWait, found.ackWait ?? .seconds(30), words, into: &differences) }
        compare("filter subject", wanted.filterSubject ?? "", found.filterSubject ?? "", { $0.isEmpty ? "none" : $0 }, into: &differences)
        return differences
    }

    private static func compare<T: Equatable>(_ name: String, _ wanted: T, _ found: T, _ text: (T) -> String, into differences: inout [String]) {
        if wanted != found { differences.append("\(name) \(text(found)) (this node wants \(text(wanted)))") }
    }

    private static func words(_ duration: Duration) -> String {
        duration == .zero ? "unlimited" : "\(duration)"
    }
}
