/// One forced outcome for the next request to a scripted path (see
/// ``Sandbox/script(path:method:_:)``). Scripted outcomes are exact: they take precedence over
/// the random ``SandboxFaults``, and a failure never reaches the emulator, so it has no side
/// effect (a 503'd `statuses/update.json` records no post, a dropped BaaS create stores nothing).
public enum SandboxScriptedFault: Sendable, Hashable {
    /// An error status (400…599) with the service's own error body.
    ///
    /// Twitter-style paths (`/1.1/`) answer `{"errors":[{"code":N,"message":"…"}]}` with `code`,
    /// or by default 400 → 215, 401 → 32, 403 → 185, 404 → 34, 429 → 88, 5xx → 131 (other 4xx →
    /// 0). A 429 carries `x-rate-limit-limit`, `x-rate-limit-remaining: 0` and an
    /// `x-rate-limit-reset` about a second after the sandbox's `now`; 429 and 503 carry
    /// `Retry-After: 1`. BaaS paths (`/1/`) and Tiqav paths answer `{"error":"…"}` (with `code`
    /// when given).
    case status(Int, code: Int? = nil)
    /// The connection is closed without an answer.
    case drop
    /// The request is served normally (side effect included) after this pause, without any
    /// random fault.
    case delay(Duration)
}

/// The outcomes still queued for one path (and method), as ``Sandbox/scriptedFaults()`` and
/// `GET /_sandbox/faults` show them.
public struct SandboxFaultScript: Sendable, Hashable {
    /// The path it matches: exactly, or every path starting with the text before a final `*`.
    public var path: String
    /// The method it matches (uppercase), or nil for any.
    public var method: String?
    /// What the next matching requests get, first to last.
    public var outcomes: [SandboxScriptedFault]

    /// Creates a script.
    public init(path: String, method: String? = nil, outcomes: [SandboxScriptedFault]) {
        self.path = path
        self.method = method
        self.outcomes = outcomes
    }

    /// Whether a request to `path` with `method` consumes from this script.
    func matches(path requestPath: String, method requestMethod: String) -> Bool {
        if let method, method != requestMethod.uppercased() { return false }
        if path.hasSuffix("*") { return requestPath.hasPrefix(path.dropLast()) }
        return requestPath == path
    }
}

/// Why a fault script was refused: a path outside the services, a status that is not an
/// error, a negative delay, or (over HTTP) a body that is not a script.
public struct SandboxScriptError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong, naming the offending field: `responses[2]: "dorp" is not …`.
    public var message: String

    /// Creates an error.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
