import Foundation

/// Decides, per request and reproducibly from the seed, which fault (if any) to inject.
struct FaultInjector: Sendable {
    struct Plan: Sendable {
        var serverError = false
        var drop = false
        var truncate = false
        var malform = false
        var drip = false
        var errorStatus = 503
    }

    let faults: SandboxFaults
    private let random: Locked<SandboxRandom>

    init(faults: SandboxFaults) {
        self.faults = faults
        self.random = Locked(SandboxRandom(seed: faults.seed))
    }

    /// Draws the same count of numbers for every request so one request's outcome does not
    /// shift the next one's.
    func plan() -> Plan {
        random.withLock { random in
            let draws = (0..<6).map { _ in random.unit() }
            return Plan(
                serverError: draws[0] < faults.serverErrorRate, drop: draws[1] < faults.dropRate,
                truncate: draws[2] < faults.truncateRate, malform: draws[3] < faults.malformRate,
                drip: draws[4] < faults.dripRate, errorStatus: draws[5] < 0.5 ? 500 : 503)
        }
    }

    func apply(_ plan: Plan, to response: SandboxResponse) -> SandboxResponse {
        var response = response
        response.delay = faults.latency
        if plan.drop { response.delivery = .drop }
        if (200..<300).contains(response.status), !response.body.isEmpty {
            if plan.truncate { response.body = response.body.prefix(response.body.count / 2) }
            if plan.malform { response = malform(response) }
        }
        if plan.drip, response.delivery == .normal {
            response.delivery = .drip(chunkSize: faults.dripChunkSize, pause: faults.dripPause)
        }
        return response
    }

    private func malform(_ response: SandboxResponse) -> SandboxResponse {
        var response = response
        switch faults.malformation {
        case .corruptBytes:
            var bytes = [UInt8](response.body)
            bytes[0] = bytes[0] == UInt8(ascii: "<") ? UInt8(ascii: "{") : UInt8(ascii: "<")
            bytes.insert(contentsOf: Array("\u{1}]]>\"".utf8), at: bytes.count / 2)
            response.body = Data(bytes)
        case .wrongShape:
            switch response.body.first {
            case UInt8(ascii: "<"): response.body = Data("<hash><error>wrong shape (injected by the sandbox)</error></hash>".utf8)
            case UInt8(ascii: "["): response.body = Data(#"{"error":"wrong shape (injected by the sandbox)"}"#.utf8)
            default: response.body = Data(#"[{"error":"wrong shape (injected by the sandbox)"}]"#.utf8)
            }
        case .emptyBody:
            response.body = Data()
        case .wrongContentType:
            response.setHeader("Content-Type", "text/html; charset=utf-8")
        }
        return response
    }
}
