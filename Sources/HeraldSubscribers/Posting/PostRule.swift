import Foundation
import Herald
import HeraldServices

/// One rule of a ``PostScheduler``: on events matching ``pattern`` (and ``conditions``), post
/// the rendered template to ``target`` — once per event, or once per new item of the event.
public struct PostRule: Sendable {
    /// What one event yields.
    public enum Scope: Sendable, Hashable {
        /// One post per event.
        case event
        /// One post per new item of the event: the elements of its array field named `new…`
        /// (`newStatuses`, `newTodos`, `newImages`); no new items, no post.
        case newItems
    }

    /// Where a post goes.
    public enum Target: Sendable, Hashable {
        /// A status on a Twitter-style service (v1.1 or X API v2), with an optional video, and
        /// optionally as a reply: `inReplyTo` renders the id of the post it answers.
        case status(text: PostTemplate, media: MediaSource?, inReplyTo: PostTemplate? = nil)
        /// An object created in a BaaS bucket, each string field a template.
        case object(bucket: String, fields: [String: FieldTemplate])
        /// A status on a Mastodon server, with options and optional media.
        case mastodonStatus(MastodonPostTemplate)
        /// A JSON body delivered to a webhook.
        case webhook(WebhookBodyTemplate)
    }

    /// The rule's name: a topic token, used in `post.<name>.sent` / `.failed` and in keys.
    public var name: String
    /// The events it reacts to.
    public var pattern: TopicPattern
    /// Per event or per new item.
    public var scope: Scope
    /// Conditions that must all hold (on the item first, then the event).
    public var conditions: [PostCondition]
    /// The service's name (a key of the scheduler's services).
    public var service: String
    /// What is posted.
    public var target: Target
    /// At most this many posts per period, if set; more wait their turn.
    public var rate: PostRate?
    /// Hours in which nothing is posted; posts wait for the end.
    public var quiet: QuietHours?

    /// Creates a rule.
    public init(name: String, on pattern: TopicPattern, scope: Scope = .event, conditions: [PostCondition] = [],
                service: String, target: Target, rate: PostRate? = nil, quiet: QuietHours? = nil) {
        self.name = name
        self.pattern = pattern
        self.scope = scope
        self.conditions = conditions
        self.service = service
        self.target = target
        self.rate = rate
        self.quiet = quiet
    }

    /// Every template of the rule, for validation.
    public var templates: [PostTemplate] {
        switch target {
        case .status(let text, let media, let inReplyTo):
            var all = [text]
            if case .field(let path)? = media { all.append((try? PostTemplate("{{\(path)}}")) ?? text) }
            if let inReplyTo { all.append(inReplyTo) }
            return all
        case .object(_, let fields):
            return fields.keys.sorted().flatMap { fields[$0]?.templates ?? [] }
        case .mastodonStatus(let template):
            return template.templates
        case .webhook(let body):
            return body.fieldPaths.compactMap { try? PostTemplate("{{\($0)}}") }
        }
    }
}

/// A video to attach: a file, or a field of the event holding a file's path.
public enum MediaSource: Sendable, Hashable {
    /// A file (absolute, or relative to the scheduler's base directory).
    case file(String)
    /// A field whose string value is a file's path.
    case field(FieldPath)
}

/// A BaaS field's value: a template for strings, any other JSON as written.
public enum FieldTemplate: Sendable, Hashable {
    /// A string with placeholders.
    case text(PostTemplate)
    /// A fixed value.
    case value(JSONValue)
    /// An object of fields.
    case object([String: FieldTemplate])

    /// The templates inside.
    var templates: [PostTemplate] {
        switch self {
        case .text(let template): [template]
        case .value: []
        case .object(let fields): fields.keys.sorted().flatMap { fields[$0]?.templates ?? [] }
        }
    }

    /// Reads a JSON value, strings becoming templates.
    public init(_ value: JSONValue) throws(PostTemplateError) {
        switch value {
        case .string(let text): self = .text(try PostTemplate(text))
        case .object(let fields):
            var templates: [String: FieldTemplate] = [:]
            for (key, field) in fields { templates[key] = try FieldTemplate(field) }
            self = .object(templates)
        default: self = .value(value)
        }
    }

    func render(_ context: PostContext) throws(PostRenderError) -> JSONValue {
        switch self {
        case .text(let template): return .string(try template.render(context))
        case .value(let value): return value
        case .object(let fields):
            var rendered: [String: JSONValue] = [:]
            for (key, field) in fields { rendered[key] = try field.render(context) }
            return .object(rendered)
        }
    }
}

/// A condition on a field: `{"field": "description", "contains": "urgent"}`.
public struct PostCondition: Sendable, Hashable, CustomStringConvertible {
    /// The test applied to the field's value.
    public enum Test: Sendable, Hashable {
        /// The value equals this JSON value.
        case equals(JSONValue)
        /// A string value contains this text (ignoring case), or an array holds it as an element.
        case contains(String)
        /// The field is present and not null (true) or absent or null (false).
        case exists(Bool)
    }

    /// The field's path.
    public var field: FieldPath
    /// The test.
    public var test: Test

    /// Creates a condition.
    public init(field: FieldPath, _ test: Test) {
        self.field = field
        self.test = test
    }

    /// Whether the condition holds in `context`.
    public func holds(in context: PostContext) -> Bool {
        let value = context.value(at: field)
        switch test {
        case .exists(let wanted):
            return (value != nil && value != .null) == wanted
        case .equals(let expected):
            return value == expected
        case .contains(let needle):
            switch value {
            case .string(let text)?: return text.range(of: needle, options: [.caseInsensitive]) != nil
            case .array(let items)?: return items.contains(.string(needle))
            default: return false
            }
        }
    }

    public var description: String {
        switch test {
        case .equals(let value): "\(field) equals \(PostTemplate.text(of: value))"
        case .contains(let text): "\(field) contains \"\(text)\""
        case .exists(let flag): flag ? "\(field) exists" : "\(field) is absent"
        }
    }
}

/// At most ``count`` posts in any ``period`` (a sliding window): `10/h`.
public struct PostRate: Sendable, Hashable, CustomStringConvertible {
    /// Posts allowed per period (at least 1).
    public var count: Int
    /// The window.
    public var period: Duration

    /// Creates a rate.
    public init(count: Int, per period: Duration) {
        self.count = max(1, count)
        self.period = period
    }

    /// Parses `N/unit` with unit `s`, `m` (or `min`), `h` or `d`; nil otherwise.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let count = Int(parts[0].trimmingCharacters(in: .whitespaces)), count > 0 else { return nil }
        let seconds: Int64
        switch parts[1].trimmingCharacters(in: .whitespaces) {
        case "s", "sec": seconds = 1
        case "m", "min": seconds = 60
        case "h": seconds = 3_600
        case "d": seconds = 86_400
        default: return nil
        }
        self.init(count: count, per: .seconds(seconds))
    }

    public var description: String { "\(count) per \(period)" }

    /// When the next post may go, given the recent posts' times (nil: now).
    package func nextSlot(after sends: [Date], now: Date) -> Date? {
        let window = period.timeInterval
        let recent = sends.filter { now.timeIntervalSince($0) < window }.sorted()
        guard recent.count >= count else { return nil }
        return recent[recent.count - count].addingTimeInterval(window)
    }
}

/// Daily hours in which nothing is posted, e.g. 22:00 to 07:00 (crossing midnight) in a time
/// zone.
public struct QuietHours: Sendable, Hashable, CustomStringConvertible {
    /// Minutes after midnight when quiet starts.
    public var start: Int
    /// Minutes after midnight when quiet ends.
    public var end: Int
    /// The zone the hours are read in.
    public var timeZone: TimeZone

    /// Creates quiet hours; `start == end` means never quiet.
    public init(start: Int, end: Int, timeZone: TimeZone = .current) {
        self.start = start
        self.end = end
        self.timeZone = timeZone
    }

    /// Minutes after midnight from `HH:MM` (00:00 to 23:59); nil otherwise.
    public static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let hours = Int(parts[0]), let minutes = Int(parts[1]),
              (0..<24).contains(hours), (0..<60).contains(minutes) else { return nil }
        return hours * 60 + minutes
    }

    /// When quiet ends, if `date` is inside quiet hours; nil when posting is allowed.
    public func end(after date: Date) -> Date? {
        guard start != end else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        // The wall clock's hour and minute, not the time since midnight: on a day the clocks
        // change the two differ by an hour.
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        let minute = (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
        let quiet = start < end ? (minute >= start && minute < end) : (minute >= start || minute < end)
        guard quiet else { return nil }
        let today = calendar.startOfDay(for: date)
        let day = start < end || minute < end ? today : calendar.date(byAdding: .day, value: 1, to: today) ?? today
        return calendar.date(bySettingHour: end / 60, minute: end % 60, second: 0, of: day, matchingPolicy: .nextTime,
                             repeatedTimePolicy: .first, direction: .forward)
    }

    public var description: String {
        let format = { (minutes: Int) in String(format: "%02d:%02d", minutes / 60, minutes % 60) }
        return "\(format(start))–\(format(end)) \(timeZone.identifier)"
    }
}
