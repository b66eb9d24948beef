import Foundation
import HeraldRuntime

/// `herald replay ARCHIVE [--config PATH] [--rule NAME] [--since TIME] [--until TIME] [--ask-service] [--post]`.
struct ReplayOptions: Equatable {
    var archive: String
    var config = "config.json"
    var rule: String?
    var since: Date?
    var until: Date?
    var post = false
    var askService = false
}

extension CommandLineParser {
    static func parseReplay(_ arguments: ArraySlice<String>, now: Date = Date()) throws(UsageError) -> Command {
        var rest = arguments
        var archive: String?
        var options = ReplayOptions(archive: "")
        while let argument = rest.popFirst() {
            if argument == "--help" || argument == "-h" { return .help(topic: "replay") }
            if argument == "--post" {
                options.post = true
                continue
            }
            if argument == "--ask-service" {
                options.askService = true
                continue
            }
            guard argument.hasPrefix("-") else {
                guard archive == nil else { throw UsageError(message: "unexpected argument '\(argument)' for 'replay' (see 'herald replay --help')") }
                archive = argument
                continue
            }
            var option = argument
            var inline: String?
            if let equals = argument.firstIndex(of: "=") {
                option = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            guard ["--config", "--rule", "--since", "--until"].contains(option) else {
                throw UsageError(message: "unknown option '\(option)' for 'replay' (see 'herald replay --help')")
            }
            guard let value = inline ?? rest.popFirst(), !value.isEmpty else { throw UsageError(message: "\(option) needs a value") }
            switch option {
            case "--config": options.config = value
            case "--rule": options.rule = value
            default:
                guard let time = ArchiveWindow.parse(value, now: now) else {
                    throw UsageError(message: "\(option): \"\(value)\" is not a time (2026-12-01T08:00:00Z, 2026-12-01, or 2h for two hours ago)")
                }
                if option == "--since" { options.since = time } else { options.until = time }
            }
        }
        guard let archive else { throw UsageError(message: "replay needs the archive's path (herald replay var/events.jsonl)") }
        options.archive = archive
        if let since = options.since, let until = options.until, since > until {
            throw UsageError(message: "--since is after --until: the window is empty")
        }
        return .replay(options)
    }
}
