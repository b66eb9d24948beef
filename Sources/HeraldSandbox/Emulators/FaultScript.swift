import Foundation

/// The queues of scripted outcomes, shared by the router (which consumes them) and the
/// ``Sandbox`` API and `/_sandbox/faults` (which fill, show and clear them).
final class FaultScript: Sendable {
    /// Scripts in the order they were first made; a request consumes from the first that
    /// matches it, and a script is removed once empty.
    private let scripts = Locked<[SandboxFaultScript]>([])

    /// Checks a script before it is queued, so a bad one is refused whole.
    static func validate(_ script: SandboxFaultScript) throws(SandboxScriptError) {
        guard script.path.hasPrefix("/") else {
            throw SandboxScriptError("path: \"\(script.path)\" must start with /")
        }
        guard !script.path.hasPrefix("/_sandbox/") || script.path == "/_sandbox/webhooks" else {
            throw SandboxScriptError("path: \"\(script.path)\" is a control path; only service paths can be scripted")
        }
        if let method = script.method, method.isEmpty || !method.allSatisfy({ $0.isLetter }) {
            throw SandboxScriptError("method: \"\(method)\" is not an HTTP method")
        }
        for (index, outcome) in script.outcomes.enumerated() {
            switch outcome {
            case .status(let status, _) where !(400...599).contains(status):
                throw SandboxScriptError("responses[\(index)]: \(status) is not an error status (400...599)")
            case .delay(let pause) where pause < .zero:
                throw SandboxScriptError("responses[\(index)]: a delay must not be negative")
            default:
                break
            }
        }
    }

    /// Appends outcomes to the queue of the same path and method, or starts one.
    func append(_ script: SandboxFaultScript) throws(SandboxScriptError) {
        var script = script
        script.method = script.method?.uppercased()
        try Self.validate(script)
        guard !script.outcomes.isEmpty else { return }
        scripts.withLock { scripts in
            if let index = scripts.firstIndex(where: { $0.path == script.path && $0.method == script.method }) {
                scripts[index].outcomes += script.outcomes
            } else {
                scripts.append(script)
            }
        }
    }

    /// Takes the next outcome for this request, if a script matches it.
    func next(for request: SandboxRequest) -> SandboxScriptedFault? {
        let path = request.path
        return scripts.withLock { scripts -> SandboxScriptedFault? in
            guard let index = scripts.firstIndex(where: { $0.matches(path: path, method: request.method) }) else { return nil }
            let outcome = scripts[index].outcomes.removeFirst()
            if scripts[index].outcomes.isEmpty { scripts.remove(at: index) }
            return outcome
        }
    }

    /// Whether some queued outcome is a drop.
    var hasPendingDrop: Bool {
        scripts.withLock { $0.contains { $0.outcomes.contains(.drop) } }
    }

    /// What is left, in order.
    func remaining() -> [SandboxFaultScript] {
        scripts.withLock { $0 }
    }

    /// Clears every script, or only those for `path`.
    func clear(path: String? = nil) {
        scripts.withLock { scripts in
            if let path { scripts.removeAll { $0.path == path } } else { scripts.removeAll() }
        }
    }
}
