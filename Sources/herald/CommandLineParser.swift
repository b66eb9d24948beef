import Foundation
import HeraldRuntime

/// A parsed command line.
enum Command: Equatable {
    case run(config: String, duration: Duration?)
    case check(config: String, print: Bool = false, rule: String? = nil, event: String? = nil)
    case reload(url: String?, config: String)
    case replay(ReplayOptions)
    case sandbox(port: Int?, config: String?)
    case tail(path: String, topics: [String], follow: Bool, json: Bool)
    case post(text: String, media: String?, config: String, service: String?, replyTo: String?)
    case status(url: String?, config: String)
    case help(topic: String?)
    case version
}

/// A command line that cannot be understood: one clear line, exit 2.
struct UsageError: Error, Equatable {
    var message: String
}

/// Hand-written parsing: `herald [run|check|sandbox|help] [options]`.
enum CommandLineParser {
    static let commands = ["run", "check", "sandbox", "tail", "post", "status", "reload", "replay", "help"]
    static let commandList = "run, check, sandbox, tail, post, status, reload, replay"

    static func parse(_ arguments: [String]) throws(UsageError) -> Command {
        var rest = arguments[...]
        if rest.first == "--version" || rest.first == "-V" { return .version }
        if rest.first == "--help" || rest.first == "-h" { return .help(topic: nil) }
        var name = "run"
        if let first = rest.first, !first.hasPrefix("-") {
            guard commands.contains(first) else {
                throw UsageError(message: "unknown command '\(first)' (commands: \(commandList); see 'herald --help')")
            }
            name = first
            rest = rest.dropFirst()
        }
        if name == "help" {
            guard rest.count <= 1 else { throw UsageError(message: "help takes at most one command") }
            if let topic = rest.first, !commands.contains(topic) {
                throw UsageError(message: "unknown command '\(topic)' (commands: \(commandList))")
            }
            return .help(topic: rest.first)
        }
        if name == "tail" { return try parseTail(rest) }
        if name == "post" { return try parsePost(rest) }
        if name == "replay" { return try parseReplay(rest) }
        var config: String?
        var printConfig = false
        var rule: String?, event: String?
        var duration: Duration?
        var port: Int?
        var url: String?
        let allowed: [String] = switch name {
        case "run": ["--config", "--for"]
        case "check": ["--config", "--print", "--rule", "--event"]
        case "status", "reload": ["--config", "--url"]
        default: ["--config", "--port"]
        }
        while let argument = rest.popFirst() {
            if argument == "--help" || argument == "-h" { return .help(topic: name) }
            var option = argument
            var inline: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                option = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            guard allowed.contains(option) else {
                if argument.hasPrefix("-") {
                    throw UsageError(message: "unknown option '\(option)' for '\(name)' (see 'herald \(name) --help')")
                }
                throw UsageError(message: "unexpected argument '\(argument)' for '\(name)' (see 'herald \(name) --help')")
            }
            if option == "--print" {
                guard inline == nil else { throw UsageError(message: "--print takes no value") }
                printConfig = true
                continue
            }
            guard let value = inline ?? rest.popFirst(), !value.isEmpty else {
                throw UsageError(message: "\(option) needs a value")
            }
            switch option {
            case "--rule":
                rule = value
            case "--event":
                event = value
            case "--config":
                guard url == nil else { throw UsageError(message: "\(name) takes --url or --config, not both") }
                config = value
            case "--url":
                guard config == nil else { throw UsageError(message: "\(name) takes --url or --config, not both") }
                url = value
            case "--for":
                guard let parsed = DurationText.parse(value), parsed > .zero else {
                    throw UsageError(message: "--for: \"\(value)\" is not a duration (250ms, 30s, 5m, 1h)")
                }
                duration = parsed
            default:
                guard let number = Int(value), (0...65535).contains(number) else {
                    throw UsageError(message: "--port: \"\(value)\" is not a port (0-65535)")
                }
                port = number
            }
        }
        switch name {
        case "check":
            guard (rule == nil) == (event == nil) else { throw UsageError(message: "check takes --rule and --event together") }
            guard !(printConfig && rule != nil) else { throw UsageError(message: "check takes --print or --rule/--event, not both") }
            return .check(config: config ?? "config.json", print: printConfig, rule: rule, event: event)
        case "reload": return .reload(url: url, config: config ?? "config.json")
        case "sandbox": return .sandbox(port: port, config: config)
        case "status": return .status(url: url, config: config ?? "config.json")
        default: return .run(config: config ?? "config.json", duration: duration)
        }
    }

    /// `herald post TEXT [--media FILE] [--reply-to ID] [--config PATH] [--service NAME]`.
    static func parsePost(_ arguments: ArraySlice<String>) throws(UsageError) -> Command {
        var rest = arguments
        var text: String?
        var options: [String: String] = [:]
        while let argument = rest.popFirst() {
            if argument == "--help" || argument == "-h" { return .help(topic: "post") }
            if argument == "--" {
                guard text == nil, let value = rest.popFirst(), rest.isEmpty else {
                    throw UsageError(message: "post takes one text (quote it: herald post \"hello world\")")
                }
                text = value
                continue
            }
            guard argument.hasPrefix("-") else {
                guard text == nil else {
                    throw UsageError(message: "unexpected argument '\(argument)' for 'post': post takes one text (quote it: herald post \"hello world\")")
                }
                text = argument
                continue
            }
            var option = argument
            var inline: String?
            if let equals = argument.firstIndex(of: "=") {
                option = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            guard ["--media", "--reply-to", "--config", "--service"].contains(option) else {
                throw UsageError(message: "unknown option '\(option)' for 'post' (see 'herald post --help')")
            }
            guard let value = inline ?? rest.popFirst(), !value.isEmpty else { throw UsageError(message: "\(option) needs a value") }
            options[option] = value
        }
        guard let text, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw UsageError(message: "post needs a non-empty text (herald post \"hello\" [--media clip.mp4])")
        }
        return .post(text: text, media: options["--media"], config: options["--config"] ?? "config.json", service: options["--service"],
                     replyTo: options["--reply-to"])
    }

    /// `herald tail PATH [--topic PATTERN]... [--follow] [--json]`.
    static func parseTail(_ arguments: ArraySlice<String>) throws(UsageError) -> Command {
        var rest = arguments
        var path: String?
        var topics: [String] = []
        var follow = false, json = false
        while let argument = rest.popFirst() {
            switch argument {
            case "--help", "-h": return .help(topic: "tail")
            case "--follow", "-f": follow = true
            case "--json": json = true
            case "--topic":
                guard let value = rest.popFirst(), !value.isEmpty else { throw UsageError(message: "--topic needs a value") }
                topics.append(value)
            default:
                if argument.hasPrefix("--topic=") {
                    topics.append(String(argument.dropFirst("--topic=".count)))
                } else if argument.hasPrefix("-") {
                    throw UsageError(message: "unknown option '\(argument)' for 'tail' (see 'herald tail --help')")
                } else if path == nil {
                    path = argument
                } else {
                    throw UsageError(message: "unexpected argument '\(argument)' for 'tail' (see 'herald tail --help')")
                }
            }
        }
        guard let path else { throw UsageError(message: "tail needs the archive's path (herald tail var/events.jsonl)") }
        return .tail(path: path, topics: topics, follow: follow, json: json)
    }
}
