import Foundation

/// Scripted faults and what the BaaS buckets hold, for tests that need one request to fail in
/// a known way and to count what a client created.
extension Sandbox {
    /// Queues forced outcomes for the next requests to `path` (and `method`, when given).
    ///
    /// Each matching request consumes one outcome, first to last; once the queue is empty,
    /// requests are served normally. Scripting the same path and method again appends to its
    /// queue. Scripted outcomes take precedence over the random ``SandboxFaults``, and a
    /// scripted failure never reaches the emulator: a 503'd `statuses/update.json` records no
    /// post. `path` is the decoded path without the query (`/1.1/statuses/update.json`,
    /// `/1/demo/objects/todos`), or a prefix ending in `*` (`/1/demo/objects/*`).
    ///
    /// ```swift
    /// try sandbox.script(path: "/1.1/statuses/update.json", [.status(503), .status(429), .drop, .status(401)])
    /// ```
    ///
    /// - Throws: ``SandboxScriptError`` (nothing is queued) when `path` does not start with `/`
    ///   or is a `/_sandbox/` control path, a status is not in 400…599, or a delay is negative.
    public func script(path: String, method: String? = nil, _ outcomes: [SandboxScriptedFault]) throws(SandboxScriptError) {
        try faultScript.append(SandboxFaultScript(path: path, method: method, outcomes: outcomes))
        // A drop must meet a fresh connection, or libcurl would silently resend the request.
        if outcomes.contains(.drop) { closeIdleConnections() }
    }

    /// The scripted outcomes not consumed yet, in the order the scripts were made.
    public func scriptedFaults() -> [SandboxFaultScript] {
        faultScript.remaining()
    }

    /// Drops every scripted outcome, or only those scripted for `path` (as it was given).
    public func clearScriptedFaults(path: String? = nil) {
        faultScript.clear(path: path)
    }

    /// The objects stored in a BaaS bucket of the sandbox's tenant, in the order they were
    /// stored (clients' creations and, with ``SandboxConfiguration/todoInterval``, grown todos;
    /// ``SandboxObject/isGenerated`` tells them apart). Deleted objects are gone.
    public func objects(inBucket bucket: String) -> [SandboxObject] {
        baas.objects(in: bucket).map(\.object)
    }
}
