import Foundation
import Herald
import HeraldServices
import HeraldSubscribers

/// A `"kind": "post"` subscriber: rules that turn events into posts, with its outbox.
public struct PostingSettings: Sendable {
    /// The name (the key in `subscribers`).
    public var name: String
    /// The rules, in name order.
    public var rules: [PostRule]
    /// Retries of posts that fail for a reason that may pass.
    public var retry: PostScheduler.RetryPolicy
    /// The outbox journal's path (relative paths against the config's directory); by default
    /// `<state>/outbox/<subscriber>.jsonl`.
    public var outbox: String?

    /// The topics it receives: its rules' `on` patterns.
    public var topics: [String] { rules.map(\.pattern.description) }
}

extension ConfigLoader {
    /// The fields of each loader kind's `finished` event, and of its new items when they are
    /// fixed (a todo's fields are the bucket's own, so they are not checked).
    static let loaderEventFields: [String: (event: Set<String>, item: Set<String>?)] = [
        "timeline": (["loader", "statuses", "newStatuses", "rateLimitRemaining"],
                     ["id_str", "created_at", "text", "user", "in_reply_to_status_id_str"]),
        "tiqav": (["loader", "images", "newImages", "imageURLs"], ["id", "ext", "width", "height", "source_url"]),
        "todo": (["loader", "bucket", "todos", "newTodos", "removedIDs"], nil),
        "mastodon": mastodonEventFields,
        "feed": feedEventFields,
    ]

    /// `{"kind": "post", "rules": {...}, "retry": {...}, "outbox": "path"}`.
    ///
    /// `loaderIDs` are the loaders written in the file, valid or not (an invalid one is
    /// reported once, where it is written).
    func readPoster(_ raw: [String: ConfigJSON], path: String, services: [String: ServiceConfiguration?]?,
                    loaders: [String: LoaderConfiguration], loaderIDs: Set<String>, baseDirectory: URL,
                    _ reader: ConfigReader) -> SubscriberConfiguration? {
        let name = String(path.dropFirst("subscribers.".count))
        guard let fields = reader.object(.object(raw), at: path, allowed: ["kind", "rules", "retry", "outbox"]) else { return nil }
        var retry = PostScheduler.RetryPolicy()
        if let value = fields["retry"], let values = reader.object(value, at: "\(path).retry", allowed: ["initial", "max", "attempts"]) {
            let initial = reader.duration(values, "initial", at: "\(path).retry", positive: true) ?? retry.initial
            let maximum = reader.duration(values, "max", at: "\(path).retry", positive: true) ?? max(retry.maximum, initial)
            if maximum < initial { reader.report("\(path).retry.max", "must not be shorter than retry.initial") }
            let attempts = reader.integer(values, "attempts", at: "\(path).retry", in: 1...1_000) ?? retry.attempts
            retry = PostScheduler.RetryPolicy(initial: initial, maximum: maximum, attempts: attempts)
        }
        let outbox = reader.string(fields, "outbox", at: path)
        guard let rulesValue = fields["rules"] else {
            reader.report("\(path).rules", "required")
            return nil
        }
        guard case .object(let entries) = rulesValue, !entries.isEmpty else {
            let found = rulesValue == .object([:]) ? "an empty object" : rulesValue.shown
            reader.report("\(path).rules", "expected an object of one or more rules by name, got \(found)")
            return nil
        }
        var rules: [PostRule] = []
        var valid = true
        for ruleName in entries.keys.sorted() {
            if let rule = readRule(ruleName, entries[ruleName] ?? .null, path: "\(path).rules.\(ruleName)",
                                   services: services, loaders: loaders, loaderIDs: loaderIDs, baseDirectory: baseDirectory, reader) {
                rules.append(rule)
            } else {
                valid = false
            }
        }
        guard valid else { return nil }
        return .post(PostingSettings(name: name, rules: rules, retry: retry, outbox: outbox))
    }

    private func readRule(_ name: String, _ value: ConfigJSON, path: String, services: [String: ServiceConfiguration?]?,
                          loaders: [String: LoaderConfiguration], loaderIDs: Set<String>, baseDirectory: URL,
                          _ reader: ConfigReader) -> PostRule? {
        var valid = PostTopics.isValidRuleName(name)
        if !valid { reader.report(path, "\"\(name)\" is not a valid rule name (letters, digits, - and _ only)") }
        let allowed = ["on", "for", "when", "service", "text", "media", "inReplyTo", "bucket", "fields", "body", "rate", "quiet"]
            + Self.mastodonRuleKeys
        guard let fields = reader.object(value, at: path, allowed: allowed) else { return nil }

        var pattern: TopicPattern?
        if let on = reader.string(fields, "on", at: path, required: true) {
            pattern = try? TopicPattern(validating: on)
            if pattern == nil { reader.report("\(path).on", "\"\(on)\" is not a topic pattern") }
        }
        var scope = PostRule.Scope.event
        if fields["for"] != nil {
            switch reader.choice(fields, "for", at: path, among: ["new", "event"]) {
            case "new"?: scope = .newItems
            case "event"?: scope = .event
            default: valid = false  // reported; checking fields against the wrong scope would mislead
            }
        }
        let conditions = readConditions(fields["when"], path: "\(path).when", reader)

        // The service decides the target.
        var target: PostRule.Target?
        let serviceName = reader.string(fields, "service", at: path, required: true)
        var serviceKind: String?
        if let serviceName, let services {
            if let entry = services[serviceName] {
                serviceKind = entry?.kind
                if let kind = serviceKind, !["twitter", "baas", "mastodon", "webhook"].contains(kind) {
                    reader.report("\(path).service", "\"\(serviceName)\" is a \(kind) service; posts go to a twitter, baas, mastodon or webhook service")
                    valid = false
                }
            } else {
                let known = services.keys.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
                reader.report("\(path).service", "no service named \"\(serviceName)\"" + (known.isEmpty ? "" : " (services: \(known))"))
                valid = false
            }
        }
        if let serviceKind, serviceKind != "mastodon", !reportMastodonOnlyKeys(fields, path: path, serviceKind: serviceKind, reader) {
            valid = false
        }
        if let serviceKind, !["twitter", "mastodon"].contains(serviceKind), fields["inReplyTo"] != nil {
            reader.report("\(path).inReplyTo", "only for a twitter or mastodon service; \"service\" is a \(serviceKind) service")
            valid = false
        }
        if let serviceKind, serviceKind != "webhook", fields["body"] != nil {
            reader.report("\(path).body", "only for a webhook service; \"service\" is a \(serviceKind) service")
            valid = false
        }
        switch serviceKind {
        case "webhook":
            target = readWebhookTarget(fields, path: path, reader).map { .webhook($0) }
            if target == nil { valid = false }
        case "mastodon":
            target = readMastodonTarget(fields, path: path, baseDirectory: baseDirectory, reader).map { .mastodonStatus($0) }
            if target == nil { valid = false }
        case "twitter":
            for key in ["bucket", "fields"] where fields[key] != nil {
                reader.report("\(path).\(key)", "only for a baas service; a twitter service posts \"text\"")
                valid = false
            }
            let text = template(fields, "text", at: path, required: true, reader)
            if let text, case let literal = Self.literalCharacters(of: text.source), literal > Self.statusCharacterLimit {
                // Nothing a placeholder is filled with can make it shorter: every post would be refused.
                reader.report("\(path).text", "without its placeholders the text is already \(literal) characters; "
                              + "a status holds at most \(Self.statusCharacterLimit)")
                valid = false
            }
            var media: MediaSource?
            switch fields["media"] {
            case nil: break
            case .string(let file)?:
                media = .file(file)
                if let problem = PathLimits.problem(file, against: baseDirectory) {
                    reader.report("\(path).media", problem)
                    valid = false
                    break
                }
                var isDirectory: ObjCBool = false
                let resolved = Self.resolve(file, against: baseDirectory).path
                if !file.lowercased().hasSuffix(".mp4") {
                    // The service posts MP4 videos only; found now rather than at the first post.
                    reader.report("\(path).media", "\"\(file)\" is not an MP4 video (the file's name must end in .mp4)")
                    valid = false
                } else if !FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory) || isDirectory.boolValue {
                    reader.report("\(path).media", "no such file: \"\(file)\" (relative to the config's directory)")
                    valid = false
                }
            case .object(let mediaFields)?:
                if let values = reader.object(.object(mediaFields), at: "\(path).media", allowed: ["field"]),
                   let field = reader.string(values, "field", at: "\(path).media", required: true) {
                    if let fieldPath = FieldPath(field) { media = .field(fieldPath) } else {
                        reader.report("\(path).media.field", "\"\(field)\" is not a field path")
                        valid = false
                    }
                }
            case let other?:
                reader.report("\(path).media", "expected a file path or {\"field\": \"…\"}, got \(other.shown)")
                valid = false
            }
            let inReplyTo = readReplyTemplate(fields, path: path, idCheck: { id in
                !id.isEmpty && id.utf8.count <= 19 && id.allSatisfy { $0.isASCII && $0.isNumber } ? nil : "not a post id (decimal digits)"
            }, reader)
            if fields["inReplyTo"] != nil, inReplyTo == nil { valid = false }
            if let text { target = .status(text: text, media: media, inReplyTo: inReplyTo) }
        case "baas":
            for key in ["text", "media"] where fields[key] != nil {
                reader.report("\(path).\(key)", "only for a twitter service; a baas service creates an object from \"fields\"")
                valid = false
            }
            let bucket = reader.string(fields, "bucket", at: path, required: true)
            var objectFields: [String: FieldTemplate]?
            switch fields["fields"] {
            case .object(let values)?:
                var templates: [String: FieldTemplate] = [:]
                for key in values.keys.sorted() {
                    if key == BaaSPostService.keyField {
                        reader.report("\(path).fields.\(key)", "reserved: the post's idempotency key is stored there")
                        continue
                    }
                    do {
                        templates[key] = try FieldTemplate(values[key] ?? .null)
                    } catch {
                        reader.report("\(path).fields.\(key)", error.description)
                    }
                }
                if templates.count == values.count { objectFields = templates }
            case nil:
                reader.report("\(path).fields", "required")
            case let other?:
                reader.report("\(path).fields", "expected an object of fields, got \(other.shown)")
            }
            if let bucket, let objectFields { target = .object(bucket: bucket, fields: objectFields) }
        default:
            break
        }

        var rate: PostRate?
        if let text = reader.string(fields, "rate", at: path) {
            rate = PostRate(parsing: text)
            if rate == nil {
                let parts = text.split(separator: "/", maxSplits: 1)
                if parts.count == 2, let count = Int(parts[0]), count <= 0, PostRate(parsing: "1/\(parts[1])") != nil {
                    reader.report("\(path).rate", "\"\(text)\" allows no posts; the count must be at least 1")
                } else {
                    reader.report("\(path).rate", "\"\(text)\" is not a rate; write posts/unit, e.g. \"10/h\" (units s, m, h, d)")
                }
                valid = false
            }
        }
        let quiet = readQuietHours(fields["quiet"], path: "\(path).quiet", reader)
        if fields["quiet"] != nil, quiet == nil { valid = false }

        guard valid, let serviceName, let pattern, let target, let conditions else { return nil }
        let rule = PostRule(name: name, on: pattern, scope: scope, conditions: conditions, service: serviceName, target: target,
                            rate: rate, quiet: quiet)
        let uses = Self.fieldUses(of: rule, path: path, conditionsAsArray: { if case .array? = fields["when"] { true } else { false } }())
        return checkFields(uses, of: rule, path: path, loaders: loaders, loaderIDs: loaderIDs, reader) ? rule : nil
    }

    /// The most characters a status may have, counted as the service counts them (`Character`s:
    /// grapheme clusters, so an accent written as a combining mark adds none).
    static let statusCharacterLimit = 280

    /// The characters of a template's text outside its placeholders: the least any post made
    /// from it has.
    static func literalCharacters(of source: String) -> Int {
        var literal = ""
        var rest = Substring(source)
        while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
            literal += rest[..<open.lowerBound]
            rest = rest[close.upperBound...]
        }
        return (literal + rest).count
    }

    /// Each key of the rule that reads fields of the event, with its path and the fields it reads.
    private static func fieldUses(of rule: PostRule, path: String, conditionsAsArray: Bool) -> [(path: String, fields: [FieldPath])] {
        var uses: [(path: String, fields: [FieldPath])] = []
        switch rule.target {
        case .status(let text, let media, let inReplyTo):
            uses.append(("\(path).text", text.fieldPaths))
            if case .field(let field)? = media { uses.append(("\(path).media.field", [field])) }
            if let inReplyTo { uses.append(("\(path).inReplyTo", inReplyTo.fieldPaths)) }
        case .object(_, let values):
            func paths(_ template: FieldTemplate) -> [FieldPath] {
                switch template {
                case .text(let text): text.fieldPaths
                case .value: []
                case .object(let nested): nested.keys.sorted().flatMap { nested[$0].map(paths) ?? [] }
                }
            }
            for key in values.keys.sorted() { uses.append(("\(path).fields.\(key)", values[key].map(paths) ?? [])) }
        case .mastodonStatus(let template):
            uses += mastodonFieldUses(of: template, path: path)
        case .webhook(let body):
            uses.append(("\(path).body", body.fieldPaths))
        }
        for (index, condition) in rule.conditions.enumerated() {
            uses.append((conditionsAsArray ? "\(path).when[\(index)].field" : "\(path).when.field", [condition.field]))
        }
        return uses
    }

    /// The rule's placeholders and conditions against the fields its events are known to have
    /// (when `on` names one loader's `finished` topic).
    private func checkFields(_ uses: [(path: String, fields: [FieldPath])], of rule: PostRule, path: String,
                             loaders: [String: LoaderConfiguration], loaderIDs: Set<String>, _ reader: ConfigReader) -> Bool {
        let tokens = rule.pattern.description.split(separator: ".").map(String.init)
        guard tokens.count == 3, tokens[0] == "loader", tokens[2] == "finished", tokens[1] != "*", tokens[1] != ">" else { return true }
        guard let loader = loaders[tokens[1]] else {
            guard !loaderIDs.contains(tokens[1]) else { return false }  // written but invalid: reported there
            let known = loaderIDs.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
            reader.report("\(path).on", "no loader named \"\(tokens[1])\"" + (known.isEmpty ? "" : " (loaders: \(known))"))
            return false
        }
        guard let known = Self.loaderEventFields[loader.kind.name] else { return true }
        let whose = "\(loader.kind.name) loader \"\(loader.id)\"'s"
        let eventFields = "events (\(known.event.sorted().joined(separator: ", ")))"
        let itemFields = "new items (\(known.item?.sorted().joined(separator: ", ") ?? ""))"
        var valid = true
        for (usePath, fields) in uses {
            for field in fields {
                let keys = field.keys
                // Where the field was looked for, when it is not there.
                let missingFrom: String?
                switch keys[0] {
                case "topic" where keys.count == 1:
                    missingFrom = nil
                case "event":
                    missingFrom = keys.count < 2 || !known.event.contains(keys[1]) ? eventFields : nil
                case "item":
                    guard rule.scope == .newItems else {
                        reader.report(usePath, "\"\(field)\" names the new item, which there is only with \"for\": \"new\"")
                        valid = false
                        continue
                    }
                    guard let items = known.item else { continue }  // a todo's fields are its own
                    missingFrom = keys.count < 2 || !items.contains(keys[1]) ? itemFields : nil
                default:
                    if rule.scope == .newItems {
                        guard let items = known.item else { continue }
                        missingFrom = items.contains(keys[0]) || known.event.contains(keys[0]) ? nil : "\(itemFields) or \(eventFields)"
                    } else {
                        missingFrom = known.event.contains(keys[0]) ? nil : eventFields
                    }
                }
                if let missingFrom {
                    reader.report(usePath, "\"\(field)\" is not a field of \(whose) \(missingFrom)")
                    valid = false
                }
            }
        }
        return valid
    }

    func template(_ fields: [String: ConfigJSON], _ key: String, at path: String, required: Bool,
                          _ reader: ConfigReader) -> PostTemplate? {
        guard let text = reader.string(fields, key, at: path, required: required) else { return nil }
        do {
            return try PostTemplate(text)
        } catch {
            reader.report("\(path).\(key)", error.description)
            return nil
        }
    }

    /// `inReplyTo`: a template of the id of the post a rule's post answers (`"{{id_str}}"` on
    /// an X timeline's new item, `"{{id}}"` on a Mastodon status); a template without
    /// placeholders is checked against `idCheck` (a reason when it is not an id) now, not at the
    /// first post.
    func readReplyTemplate(_ fields: [String: ConfigJSON], path: String, idCheck: (String) -> String?,
                           _ reader: ConfigReader) -> PostTemplate? {
        guard fields["inReplyTo"] != nil, let reply = template(fields, "inReplyTo", at: path, required: false, reader) else { return nil }
        if reply.fieldPaths.isEmpty, let problem = idCheck(reply.source) {
            reader.report("\(path).inReplyTo", "\"\(reply.source)\" is \(problem)")
            return nil
        }
        return reply
    }

    /// `when`: one condition object or an array of them (all must hold).
    private func readConditions(_ value: ConfigJSON?, path: String, _ reader: ConfigReader) -> [PostCondition]? {
        guard let value else { return [] }
        let items: [(String, ConfigJSON)]
        switch value {
        case .array(let values): items = values.enumerated().map { ("\(path)[\($0.offset)]", $0.element) }
        case .object: items = [(path, value)]
        default:
            reader.report(path, "expected a condition object or an array of them, got \(value.shown)")
            return nil
        }
        var conditions: [PostCondition] = []
        for (itemPath, item) in items {
            guard let fields = reader.object(item, at: itemPath, allowed: ["field", "equals", "contains", "exists"]) else { continue }
            guard let field = reader.string(fields, "field", at: itemPath, required: true) else { continue }
            guard let fieldPath = FieldPath(field) else {
                reader.report("\(itemPath).field", "\"\(field)\" is not a field path")
                continue
            }
            let tests = ["equals", "contains", "exists"].filter { fields[$0] != nil }
            guard tests.count == 1, let test = tests.first else {
                let found = tests.isEmpty ? "no test" : tests.map { "\"\($0)\"" }.joined(separator: " and ") + " together"
                reader.report(itemPath, "\(found); expected exactly one of \"equals\", \"contains\", \"exists\"")
                continue
            }
            switch (test, fields[test]) {
            case ("equals", let expected?): conditions.append(PostCondition(field: fieldPath, .equals(expected)))
            case ("contains", .string(let text)?): conditions.append(PostCondition(field: fieldPath, .contains(text)))
            case ("exists", .bool(let flag)?): conditions.append(PostCondition(field: fieldPath, .exists(flag)))
            case (_, let other?):
                reader.report("\(itemPath).\(test)", "expected \(test == "contains" ? "a string" : "true or false"), got \(other.shown)")
            default: break
            }
        }
        return conditions.count == items.count ? conditions : nil
    }

    /// `quiet`: `{"from": "22:00", "to": "07:00", "timeZone": "Asia/Tokyo"}` (the machine's zone by default).
    private func readQuietHours(_ value: ConfigJSON?, path: String, _ reader: ConfigReader) -> QuietHours? {
        guard let value, let fields = reader.object(value, at: path, allowed: ["from", "to", "timeZone"]) else { return nil }
        var minutes: [Int] = []
        for key in ["from", "to"] {
            guard let text = reader.string(fields, key, at: path, required: true) else { continue }
            if let value = QuietHours.minutes(text) { minutes.append(value) } else {
                reader.report("\(path).\(key)", "\"\(text)\" is not a time of day (HH:MM, 00:00 to 23:59)")
            }
        }
        var zone = TimeZone.current
        if let identifier = reader.string(fields, "timeZone", at: path) {
            guard let named = TimeZone(identifier: identifier) else {
                reader.report("\(path).timeZone", "\"\(identifier)\" is not a time zone (e.g. \"UTC\", \"Asia/Tokyo\")")
                return nil
            }
            zone = named
        }
        guard minutes.count == 2 else { return nil }
        guard minutes[0] != minutes[1] else {
            reader.report(path, "\"from\" and \"to\" are the same time, so it would never be quiet; leave \"quiet\" out instead")
            return nil
        }
        return QuietHours(start: minutes[0], end: minutes[1], timeZone: zone)
    }
}
