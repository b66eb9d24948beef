import Foundation
import Herald
import HeraldLoaders
import HeraldSandbox
import HeraldServices
import HeraldSubscribers

extension ConfigLoader {
    // MARK: Loaders

    /// The shortest `every` of a loader whose service is at a real URL: rate limits are counted
    /// in minutes, and a faster loop only burns the service's patience and the machine.
    public static let minimumLoaderInterval: Duration = .seconds(1)
    /// The shortest `every` of a loader whose service is the embedded sandbox, which is on
    /// this machine and made for fast demonstrations and tests.
    public static let minimumSandboxLoaderInterval: Duration = .milliseconds(100)

    func readLoaders(_ value: ConfigJSON?, services: [String: ServiceConfiguration?]?, onSandbox: Set<String>,
                     baseDirectory: URL, _ reader: ConfigReader) -> [String: LoaderConfiguration] {
        guard let value else {
            reader.report("loaders", "required")
            return [:]
        }
        guard case .object(let entries) = value else {
            reader.report("loaders", "expected an object, got \(value.shown)")
            return [:]
        }
        var loaders: [String: LoaderConfiguration] = [:]
        for id in entries.keys.sorted() {
            if let loader = readLoader(id, entries[id] ?? .null, services: services, onSandbox: onSandbox,
                                       baseDirectory: baseDirectory, reader) { loaders[id] = loader }
        }
        return loaders
    }

    private func readLoader(_ id: String, _ value: ConfigJSON, services: [String: ServiceConfiguration?]?, onSandbox: Set<String>,
                            baseDirectory: URL, _ reader: ConfigReader) -> LoaderConfiguration? {
        let path = "loaders.\(id)"
        var idValid = true
        if (try? LoaderTopics.validate(id: id)) == nil || !id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) {
            reader.report(path, "\"\(id)\" is not a valid loader id (letters, digits, - and _ only)")
            idValid = false
        } else if id.utf8.count > PathLimits.nameMax - PathLimits.loaderStateFileExtra {
            let allowed = PathLimits.nameMax - PathLimits.loaderStateFileExtra
            reader.report(path, "the id is \(id.utf8.count) bytes long; at most \(allowed) fit in its state file's name")
            idValid = false
        }
        let common = ["kind", "service", "every", "jitter", "backoff"]
        var kindName: String?
        if case .object(let fields) = value {
            kindName = reader.choice(fields, "kind", at: path, among: ["timeline", "tiqav", "todo", "mastodon", "feed"], required: true)
        }
        let specific: [String] = switch kindName {
        case "timeline": ["timeline", "screenName", "count", "format", "query"]
        case "tiqav": ["query"]
        case "todo": ["bucket"]
        case "mastodon": Self.mastodonLoaderKeys
        case "feed": Self.feedLoaderKeys
        default: ["timeline", "screenName", "count", "format", "query", "bucket"] + Self.mastodonLoaderKeys
        }
        let keys = kindName == "feed" ? common.filter { $0 != "service" } + specific : common + specific
        guard let fields = reader.object(value, at: path, allowed: keys) else { return nil }
        let service = kindName == "feed" ? "" : readServiceReference(fields, path: path, loaderKind: kindName, services: services, reader)
        let sandboxed = if case .string(let name)? = fields["service"] {
            onSandbox.contains(name)
        } else if kindName == "feed", case .string(let url)? = fields["url"] {
            url.hasPrefix("sandbox:")
        } else {
            false
        }
        let schedule = readSchedule(fields, path: path, onSandbox: sandboxed, reader)
        let kind: LoaderConfiguration.Kind?
        switch kindName {
        case "timeline" where Self.isXService(fields, services):
            kind = readXTimeline(fields, at: path, reader)
        case "timeline":
            if fields["query"] != nil { reader.report("\(path).query", "only for a timeline on a twitter service with \"api\": \"v2\"") }
            let timeline = reader.choice(fields, "timeline", at: path, among: ["home", "user"]) ?? "home"
            let screenName = reader.string(fields, "screenName", at: path, required: timeline == "user")
            let count = reader.integer(fields, "count", at: path, in: 1...200)
            let format = reader.choice(fields, "format", at: path, among: ["json", "xml"]).flatMap(TimelineFormat.init(rawValue:))
            if timeline == "home", screenName != nil {
                reader.report("\(path).screenName", "only for \"timeline\": \"user\"")
            }
            let which: TimelineLoader.Timeline? = timeline == "home" ? .home : screenName.map { .user(screenName: $0) }
            kind = which.map { .timeline(.init(timeline: $0, count: count, format: format ?? .json)) }
        case "tiqav":
            kind = .tiqav(reader.string(fields, "query", at: path).map { .search($0) } ?? .random)
        case "todo":
            kind = reader.string(fields, "bucket", at: path, required: true).map { .todo(bucket: $0) }
        case "mastodon":
            kind = readMastodonLoader(fields, at: path, reader).map { .mastodon($0) }
        case "feed":
            kind = readFeedLoader(fields, at: path, baseDirectory: baseDirectory, reader).map { .feed($0) }
        default:
            kind = nil
        }
        guard idValid, let kind, let service, let schedule else { return nil }
        return LoaderConfiguration(id: id, service: service, kind: kind, schedule: schedule)
    }

    private func readServiceReference(_ fields: [String: ConfigJSON], path: String, loaderKind: String?,
                                      services: [String: ServiceConfiguration?]?, _ reader: ConfigReader) -> String? {
        guard let name = reader.string(fields, "service", at: path, required: true) else { return nil }
        guard let services else { return nil }
        guard let entry = services[name] else {
            let known = services.keys.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
            reader.report("\(path).service", "no service named \"\(name)\"" + (known.isEmpty ? "" : " (services: \(known))"))
            return nil
        }
        guard let service = entry else { return nil }
        let needed = ["timeline": "twitter", "tiqav": "tiqav", "todo": "baas", "mastodon": "mastodon"]
        if let loaderKind, let want = needed[loaderKind], service.kind != want {
            reader.report("\(path).service", "\"\(name)\" is a \(service.kind) service; a \(loaderKind) loader needs a \(want) service")
            return nil
        }
        return name
    }

    private func readSchedule(_ fields: [String: ConfigJSON], path: String, onSandbox: Bool, _ reader: ConfigReader) -> SchedulePolicy? {
        var every = reader.duration(fields, "every", at: path, required: true, positive: true)
        let minimum = onSandbox ? Self.minimumSandboxLoaderInterval : Self.minimumLoaderInterval
        if let interval = every, interval < minimum {
            let real = DurationText.format(Self.minimumLoaderInterval), sandbox = DurationText.format(Self.minimumSandboxLoaderInterval)
            let which = onSandbox ? "\(sandbox) for a service on the sandbox (\(real) for a real one)" : "\(real) (\(sandbox) for a service on the sandbox)"
            reader.report("\(path).every", "\(DurationText.format(interval)) is below the minimum of \(which)")
            every = nil
        }
        let jitter = reader.duration(fields, "jitter", at: path)
        var initial: Duration?
        var maximum: Duration?
        if let backoff = fields["backoff"],
           let values = reader.object(backoff, at: "\(path).backoff", allowed: ["initial", "max"]) {
            initial = reader.duration(values, "initial", at: "\(path).backoff", positive: true)
            maximum = reader.duration(values, "max", at: "\(path).backoff", positive: true)
            if let initial, let maximum, maximum < initial {
                reader.report("\(path).backoff.max", "must not be shorter than backoff.initial")
            }
        }
        guard let every else { return nil }
        var policy = SchedulePolicy(interval: every, jitter: jitter ?? .zero)
        if let initial { policy.backoffInitial = initial }
        policy.backoffMax = maximum ?? max(policy.backoffMax, policy.backoffInitial)
        return policy
    }

    // MARK: Subscribers

    func readSubscribers(_ value: ConfigJSON?, services: [String: ServiceConfiguration?]?, loaders: [String: LoaderConfiguration],
                         loaderIDs: Set<String>, baseDirectory: URL, _ reader: ConfigReader) -> [String: SubscriberConfiguration] {
        guard let value else { return [:] }
        guard case .object(let entries) = value else {
            reader.report("subscribers", "expected an object, got \(value.shown)")
            return [:]
        }
        var subscribers: [String: SubscriberConfiguration] = [:]
        for name in entries.keys.sorted() {
            let path = "subscribers.\(name)"
            if case .object(let raw)? = entries[name], case .string("file")? = raw["kind"] {
                if let archive = readArchive(raw, path: path, reader) {
                    checkFiles(of: archive, baseDirectory: baseDirectory, reader)
                    subscribers[name] = archive
                }
                continue
            }
            if case .object(let raw)? = entries[name], case .string("post")? = raw["kind"] {
                if let poster = readPoster(raw, path: path, services: services, loaders: loaders, loaderIDs: loaderIDs,
                                           baseDirectory: baseDirectory, reader) {
                    checkFiles(of: poster, baseDirectory: baseDirectory, reader)
                    subscribers[name] = poster
                }
                continue
            }
            guard let fields = reader.object(entries[name] ?? .null, at: path,
                                             allowed: ["kind", "topics", "level", "format", "output"]) else { continue }
            let kind = reader.choice(fields, "kind", at: path, among: ["log", "file", "post"], required: true)
            let topics = readTopics(fields["topics"], path: "\(path).topics", reader)
            let level = reader.choice(fields, "level", at: path, among: LogLevel.allCases.map(\.rawValue)).flatMap(LogLevel.init(rawValue:))
            let format = reader.choice(fields, "format", at: path, among: LogFormat.allCases.map(\.rawValue)).flatMap(LogFormat.init(rawValue:))
            let output: LogSettings.Output = switch reader.string(fields, "output", at: path) {
            case nil, "stderr"?: .standardError
            case "stdout"?: .standardOutput
            case let file?: .file(file)
            }
            guard kind != nil, let topics else { continue }
            let subscriber = SubscriberConfiguration.log(LogSettings(name: name, topics: topics, level: level ?? .info,
                                                                     format: format ?? .text, output: output))
            checkFiles(of: subscriber, baseDirectory: baseDirectory, reader)
            subscribers[name] = subscriber
        }
        return subscribers
    }

    /// A `"kind": "file"` subscriber: `path` (required), `topics`, `durability`, `syncEvery`,
    /// `rotate: {"maxBytes", "keep"}`.
    private func readArchive(_ raw: [String: ConfigJSON], path: String, _ reader: ConfigReader) -> SubscriberConfiguration? {
        let name = String(path.dropFirst("subscribers.".count))
        guard let fields = reader.object(.object(raw), at: path,
                                         allowed: ["kind", "topics", "path", "durability", "syncEvery", "rotate"]) else { return nil }
        let topics = readTopics(fields["topics"], path: "\(path).topics", reader)
        let file = reader.string(fields, "path", at: path, required: true)
        let durability = reader.choice(fields, "durability", at: path, among: FileSinkDurability.allCases.map(\.rawValue))
            .flatMap(FileSinkDurability.init(rawValue:)) ?? .batch
        let syncEvery = reader.duration(fields, "syncEvery", at: path, positive: true) ?? .milliseconds(100)
        var rotation: FileSinkRotation?
        if let value = fields["rotate"], let rotate = reader.object(value, at: "\(path).rotate", allowed: ["maxBytes", "keep"]) {
            let maxBytes = reader.integer(rotate, "maxBytes", at: "\(path).rotate", in: 1...(1 << 40))
            let keep = reader.integer(rotate, "keep", at: "\(path).rotate", in: 0...1_000)
            if rotate["maxBytes"] == nil { reader.report("\(path).rotate.maxBytes", "required") }
            if let maxBytes { rotation = FileSinkRotation(maxBytes: maxBytes, keep: keep ?? 5) }
        }
        guard let topics, let file else { return nil }
        return .file(ArchiveSettings(name: name, topics: topics, path: file, durability: durability, syncEvery: syncEvery,
                                     rotation: rotation))
    }

    func readTopics(_ value: ConfigJSON?, path: String, _ reader: ConfigReader) -> [String]? {
        guard let value else { return [">"] }
        guard case .array(let items) = value, !items.isEmpty else {
            reader.report(path, "expected a non-empty array of topic patterns, got \(value.shown)")
            return nil
        }
        var patterns: [String] = []
        for (index, item) in items.enumerated() {
            guard case .string(let text) = item else {
                reader.report("\(path)[\(index)]", "expected a topic pattern, got \(item.shown)")
                continue
            }
            do {
                _ = try TopicPattern(validating: text)
                patterns.append(text)
            } catch {
                reader.report("\(path)[\(index)]", "\"\(text)\" is not a topic pattern")
            }
        }
        return patterns.count == items.count ? patterns : nil
    }

    // MARK: Sandbox

    func readSandbox(_ value: ConfigJSON?, _ reader: ConfigReader) -> SandboxSettings {
        var settings = SandboxSettings()
        guard let value, let fields = reader.object(value, at: "sandbox", allowed: ["port", "faults", "statusInterval", "todoInterval"]) else {
            return settings
        }
        settings.port = reader.integer(fields, "port", at: "sandbox", in: 0...65535) ?? 0
        settings.statusInterval = reader.duration(fields, "statusInterval", at: "sandbox", positive: true)
        settings.todoInterval = reader.duration(fields, "todoInterval", at: "sandbox", positive: true)
        let allowed = ["seed", "latency", "errorRate", "dropRate", "truncateRate", "malformRate"]
        if let faults = fields["faults"], let values = reader.object(faults, at: "sandbox.faults", allowed: allowed) {
            let path = "sandbox.faults"
            var plan = SandboxFaults()
            plan.seed = UInt64(reader.integer(values, "seed", at: path, in: 0...Int(Int32.max)) ?? 1)
            plan.latency = reader.duration(values, "latency", at: path) ?? .zero
            plan.serverErrorRate = reader.fraction(values, "errorRate", at: path) ?? 0
            plan.dropRate = reader.fraction(values, "dropRate", at: path) ?? 0
            plan.truncateRate = reader.fraction(values, "truncateRate", at: path) ?? 0
            plan.malformRate = reader.fraction(values, "malformRate", at: path) ?? 0
            settings.faults = plan
        }
        return settings
    }
}
