import Foundation
import HeraldRuntime

/// The demo configuration as a dictionary tests can break one field at a time.
enum ConfigFixtures {
    static var demo: [String: Any] {
        [
            "state": "var/state",
            "services": [
                "twitter": ["url": "sandbox", "auth": [
                    "consumerKey": "sandbox", "consumerSecret": ["env": "TW_CONSUMER_SECRET", "default": "sandbox-secret"],
                    "token": "sandbox", "tokenSecret": "sandbox-token-secret"]],
                "tiqav": ["url": "sandbox"],
                "baas": ["url": "sandbox", "tenant": "demo", "appId": "todo", "appKey": "sandbox"],
            ],
            "loaders": [
                "home": ["kind": "timeline", "service": "twitter", "timeline": "home", "count": 20, "format": "json", "every": "30s"],
                "itmedia": ["kind": "timeline", "service": "twitter", "timeline": "user", "screenName": "itmedia",
                            "format": "xml", "every": "2m"],
                "images": ["kind": "tiqav", "service": "tiqav", "every": "5m"],
                "todos": ["kind": "todo", "service": "baas", "bucket": "todos", "every": "20s"],
            ],
            "subscribers": ["console": ["kind": "log", "topics": ["loader.>", "post.>", "bus.>"], "level": "info"]],
            "sandbox": ["port": 0, "faults": ["errorRate": 0.0, "latency": "0ms", "seed": 1]],
        ]
    }

    /// Parses `object` and returns its issues as printed (`path: message`), empty when valid.
    static func issues(_ object: [String: Any], environment: [String: String] = [:]) -> [String] {
        guard let data = try? JSONSerialization.data(withJSONObject: object) else { return ["unencodable fixture"] }
        return issues(data, environment: environment)
    }

    static func issues(_ data: Data, environment: [String: String] = [:]) -> [String] {
        do {
            _ = try ConfigLoader(environment: environment).parse(data, baseDirectory: URL(fileURLWithPath: "/tmp/herald"))
            return []
        } catch {
            return error.issues.map(\.description)
        }
    }

    /// `demo` with the value at a dotted path replaced (nil removes it).
    static func demo(setting path: String, to value: Any?) -> [String: Any] {
        set(demo, path.split(separator: ".").map(String.init), value)
    }

    private static func set(_ object: [String: Any], _ keys: [String], _ value: Any?) -> [String: Any] {
        var copy = object
        guard let first = keys.first else { return copy }
        if keys.count == 1 {
            copy[first] = value
        } else {
            copy[first] = set(copy[first] as? [String: Any] ?? [:], Array(keys.dropFirst()), value)
        }
        return copy
    }
}
