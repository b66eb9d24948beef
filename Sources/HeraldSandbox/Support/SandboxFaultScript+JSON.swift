import Foundation
import HeraldSync

/// The JSON form of a fault script, for `/_sandbox/faults`:
/// `{"path": "/1.1/statuses/update.json", "method": "POST", "responses": [503, 429, "drop",
/// {"status": 403, "code": 187}, {"delay": 0.5}]}` (`method` optional; a delay in seconds).
extension SandboxFaultScript {
    static let example = #"{"path": "/1.1/statuses/update.json", "responses": [503, 429, "drop", 401]}"#

    /// Reads a script from a request body; every problem is a ``SandboxScriptError`` naming
    /// the field, never a trap.
    static func parse(_ body: Data) throws(SandboxScriptError) -> SandboxFaultScript {
        let value: SandboxJSON
        do {
            value = try JSONDecoder().decode(SandboxJSON.self, from: body)
        } catch {
            throw SandboxScriptError("the body is not valid JSON; expected an object such as \(example)")
        }
        guard case .object(let fields) = value else {
            throw SandboxScriptError("expected a JSON object such as \(example), got \(value.serialized().prefix(80))")
        }
        if let unknown = fields.first(where: { !["path", "method", "responses"].contains($0.0) }) {
            throw SandboxScriptError("\(unknown.0): unknown key (expected path, method, responses)")
        }
        guard let pathValue = value["path"] else { throw SandboxScriptError("path: required") }
        guard case .string(let path) = pathValue else { throw SandboxScriptError("path: expected a string, got \(pathValue.serialized())") }
        var method: String?
        if let methodValue = value["method"], methodValue != .null {
            guard case .string(let text) = methodValue else {
                throw SandboxScriptError("method: expected a string such as \"POST\", got \(methodValue.serialized())")
            }
            method = text.uppercased()
        }
        guard let responsesValue = value["responses"] else { throw SandboxScriptError("responses: required") }
        guard case .array(let items) = responsesValue else {
            throw SandboxScriptError("responses: expected an array such as [503, \"drop\"], got \(responsesValue.serialized())")
        }
        var outcomes: [SandboxScriptedFault] = []
        for (index, item) in items.enumerated() {
            outcomes.append(try outcome(item, at: "responses[\(index)]"))
        }
        let script = SandboxFaultScript(path: path, method: method, outcomes: outcomes)
        try FaultScript.validate(script)
        return script
    }

    private static func outcome(_ item: SandboxJSON, at path: String) throws(SandboxScriptError) -> SandboxScriptedFault {
        let expected = #"a status (400...599), "drop", {"status": N, "code": N} or {"delay": seconds}"#
        switch item {
        case .int(let status):
            return .status(Int(status))
        case .string("drop"):
            return .drop
        case .object(let fields):
            if let unknown = fields.first(where: { !["status", "code", "delay"].contains($0.0) }) {
                throw SandboxScriptError("\(path).\(unknown.0): unknown key (expected status, code or delay)")
            }
            switch (item["status"], item["code"], item["delay"]) {
            case (.int(let status)?, nil, nil):
                return .status(Int(status))
            case (.int(let status)?, .int(let code)?, nil):
                return .status(Int(status), code: Int(code))
            case (nil, nil, let delay?):
                guard let seconds = delay.number, seconds.isFinite, seconds >= 0, seconds <= 3600 else {
                    throw SandboxScriptError("\(path).delay: expected seconds in 0...3600, got \(delay.serialized())")
                }
                return .delay(.seconds(seconds))
            default:
                throw SandboxScriptError("\(path): expected \(expected), got \(item.serialized())")
            }
        default:
            throw SandboxScriptError("\(path): \(item.serialized()) is not \(expected)")
        }
    }

    /// The form `GET /_sandbox/faults` shows; it can be posted back as is.
    var json: SandboxJSON {
        .object([
            ("path", .string(path)), ("method", method.map { .string($0) } ?? .null),
            ("responses", .array(outcomes.map { outcome -> SandboxJSON in
                switch outcome {
                case .status(let status, nil): .int(Int64(status))
                case .status(let status, let code?): .object([("status", .int(Int64(status))), ("code", .int(Int64(code)))])
                case .drop: .string("drop")
                case .delay(let pause): .object([("delay", .double(pause.timeInterval))])
                }
            })),
        ])
    }
}

extension SandboxJSON {
    /// The value as a number, when it is one.
    var number: Double? {
        switch self {
        case .int(let value): Double(value)
        case .uint(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }
}
