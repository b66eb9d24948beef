import Foundation
import HeraldIO
import HeraldRuntime
import HeraldSync

extension Commands {
    /// `herald replay`: what the post rules would post for archived events; with `--post`, posts
    /// the new ones through the outbox. 0 done, 1 the archive is missing or a post failed, 2
    /// usage or configuration error.
    static func replay(_ options: ReplayOptions) async -> Int32 {
        guard let configuration = validConfiguration(options.config) else { return 2 }
        let replay: ArchiveReplay
        do {
            replay = try ArchiveReplay(configuration: configuration, archive: options.archive, rule: options.rule,
                                       window: ArchiveWindow(since: options.since, until: options.until))
        } catch {
            Terminal.err("herald: \(error)")
            return 2
        }
        // The archive is read on a thread of its own, not the cooperative pool.
        var plan = await BlockingIOThread(name: "herald.replay-read").run { replay.plan() }
        guard !plan.files.isEmpty else {
            Terminal.err("herald: \(options.archive): no such file")
            return 1
        }
        if options.askService { plan = await replay.askServices(plan) }
        for candidate in plan.candidates { show(candidate) }
        let fresh = plan.candidates.filter { !$0.failed && $0.outbox == nil }.count
        let known = plan.candidates.filter { $0.outbox != nil }.count
        let failed = plan.candidates.filter(\.failed).count
        var summary = "\(plan.events) \(plan.events == 1 ? "event" : "events") in the window"
        if let since = options.since { summary += " since \(Self.iso(since))" }
        if let until = options.until { summary += " until \(Self.iso(until))" }
        summary += "; \(plan.candidates.count) \(plan.candidates.count == 1 ? "post" : "posts"): \(fresh) new, \(known) already in the outbox, \(failed) cannot be made"
        if plan.skipped > 0 { summary += "; \(plan.skipped) \(plan.skipped == 1 ? "line" : "lines") skipped (corrupt or torn)" }
        if plan.events == 0 { summary = "no events in the window" + (plan.skipped > 0 ? " (\(plan.skipped) lines skipped: corrupt or torn)" : "") }
        Terminal.out(summary)
        if options.askService { showServiceAnswers(plan.candidates, configuration: configuration) }
        guard options.post else {
            if fresh > 0 { Terminal.out("dry run: nothing posted (add --post to post the \(fresh) new through the outbox)") }
            return 0
        }
        let posted: [ArchiveReplay.Posted]
        do {
            posted = try await replay.post(plan, daemon: HeraldDaemon(configuration: configuration))
        } catch {
            Terminal.err("herald: \(error)")
            return 1
        }
        var status: Int32 = 0
        for result in posted {
            Terminal.out("posted \(result.sent) via \(result.subscriber)" + (result.failures.isEmpty ? "" : ", \(result.failures.count) failed"))
            for failure in result.failures { Terminal.err("herald: \(result.subscriber): \(failure)") }
            if !result.failures.isEmpty { status = 1 }
        }
        return status
    }

    /// `herald check --rule NAME --event FILE`: renders one rule against one archived envelope.
    static func checkRule(config path: String, rule: String, event file: String) async -> Int32 {
        guard let configuration = validConfiguration(path) else { return 2 }
        let replay: ArchiveReplay
        do {
            replay = try ArchiveReplay(configuration: configuration, archive: file, rule: rule)
        } catch {
            Terminal.err("herald: \(error)")
            return 2
        }
        let read = await BlockingIOThread(name: "herald.event-read").run { FileManager.default.contents(atPath: file) }
        guard let data = read else {
            Terminal.err("herald: --event \(file): no such file")
            return 2
        }
        let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
        guard let envelope = lines.lazy.compactMap({ ArchivedEvent.envelope(fromLine: String($0)) }).first else {
            Terminal.err("herald: --event \(file): no archived event in it (a line as 'herald tail --json' prints it: {\"topic\": …, \"event\": {…}, …})")
            return 2
        }
        let candidates = replay.render(envelope)
        guard !candidates.isEmpty else {
            Terminal.out("rule \(rule) does not match \(envelope.topic.name) (it is on \(replay.patterns.joined(separator: ", "))): nothing to post")
            return 0
        }
        candidates.forEach(show)
        return candidates.contains(where: \.failed) ? 1 : 0
    }

    private static func show(_ candidate: ArchiveReplay.Candidate) {
        let state = candidate.failed ? "cannot post" : candidate.outbox.map { "outbox: \($0)" } ?? "outbox: new (would post)"
        Terminal.out("\(iso(candidate.time))  \(candidate.topic)  rule \(candidate.subscriber).\(candidate.rule) -> \(candidate.service)  [\(state)]")
        if let key = candidate.key { Terminal.out("  key: \(key)") }
        Terminal.out("  \(candidate.failed ? "why" : "post"): \(candidate.content)")
        switch candidate.serviceAnswer {
        case .present(let id)?: Terminal.out("  service: has it (\(id))")
        case .absent?: Terminal.out("  service: does not have it")
        case .cannotAsk?: Terminal.out("  service: cannot be asked (see below)")
        case .failed(let why)?: Terminal.out("  service: could not be asked: \(why)")
        case nil: break
        }
    }

    /// `--ask-service`: how many the services have, and why the others could not be asked (once
    /// per service).
    private static func showServiceAnswers(_ candidates: [ArchiveReplay.Candidate], configuration: HeraldConfiguration) {
        let answers = candidates.compactMap(\.serviceAnswer)
        guard !answers.isEmpty else { return }
        let present = answers.filter { if case .present = $0 { true } else { false } }.count
        let absent = answers.filter { $0 == .absent }.count
        let unasked = answers.filter { if case .cannotAsk = $0 { true } else { false } }.count
        let failed = answers.filter { if case .failed = $0 { true } else { false } }.count
        Terminal.out("services asked: \(present) already there, \(absent) not there, \(unasked) cannot be asked"
                     + (failed > 0 ? ", \(failed) could not be asked" : ""))
        var said: Set<String> = []
        for candidate in candidates {
            guard case .cannotAsk(let why)? = candidate.serviceAnswer, said.insert(candidate.service).inserted else { continue }
            let kind = configuration.services[candidate.service]?.kind ?? "?"
            Terminal.out("  service \(candidate.service) (\(kind)) cannot be asked: \(why)")
        }
    }

    private static func iso(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }
}
