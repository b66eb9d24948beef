import Foundation
import HeraldRuntime
import Testing

/// What `herald check` must refuse because `run` could never work with it: paths the system
/// cannot open, schedules that hammer a service, texts no status can hold.
@Suite struct ConfigLimitsTests {
    static func archive(_ path: String) -> [String: Any] {
        ConfigFixtures.set(ConfigFixtures.demo, "subscribers.archive", ["kind": "file", "path": path])
    }

    // MARK: Paths

    @Test(arguments: [
        ("state", "var/st\u{0}ate"),
        ("subscribers.archive.path", "var/events\u{0}.jsonl"),
        ("subscribers.console.output", "var/herald\u{0}.log"),
        ("subscribers.posts.outbox", "var/out\u{0}box.jsonl"),
        ("subscribers.posts.rules.tweet.media", "clips/a\u{0}.mp4"),
    ])
    func aNULCharacterInAPathIsAnError(path: String, value: String) {
        var object = ConfigFixtures.set(ConfigFixtures.withPosts, "subscribers.archive", ["kind": "file", "path": "var/events.jsonl"])
        object = ConfigFixtures.set(object, path, value)
        #expect(ConfigFixtures.issues(object) == ["\(path): contains a NUL character, which no file name can hold"])
    }

    @Test func aDirectoryNameLongerThanTheSystemAllowsIsAnError() {
        let issues = ConfigFixtures.issues(Self.archive("var/" + String(repeating: "d", count: 256) + "/events.jsonl"))
        #expect(issues == ["subscribers.archive.path: a name in the path is 256 bytes long; the system allows at most 255"])
    }

    /// Names are counted in bytes, as the kernel counts them: 86 three-byte characters are 258.
    @Test func aLogFileNameIsCountedInBytes() {
        let object = ConfigFixtures.set(ConfigFixtures.demo, "subscribers.console.output", String(repeating: "あ", count: 86))
        #expect(ConfigFixtures.issues(object) == ["subscribers.console.output: the file name is 258 bytes long; the system allows at most 255"])
    }

    /// Rotation and repair write `events.1000.jsonl` and `events.jsonl.torn` beside the archive.
    @Test func anArchiveNameLeavesRoomForTheFilesBesideIt() {
        let fits = Self.archive(String(repeating: "e", count: 244) + ".jsonl")
        #expect(ConfigFixtures.issues(fits) == [])
        let tooLong = Self.archive(String(repeating: "e", count: 245) + ".jsonl")
        #expect(ConfigFixtures.issues(tooLong) == [
            "subscribers.archive.path: the file name is 251 bytes long; at most 250 are allowed here "
                + "(the system's 255, less 5 for the names Herald derives from it)"
        ])
    }

    @Test func aPathLongerThanTheSystemAllowsIsAnError() {
        let path = "/" + String(repeating: String(repeating: "p", count: 200) + "/", count: 21) + "events.jsonl"
        #expect(ConfigFixtures.issues(Self.archive(path)) == [
            "subscribers.archive.path: the path is 4234 bytes long; at most 4090 are allowed here "
                + "(the system's 4095, less 5 for the names Herald derives from it)"
        ])
    }

    @Test func aStateDirectoryLeavesRoomForTheStateFilesInIt() {
        let state = "/" + String(repeating: String(repeating: "s", count: 200) + "/", count: 19) + String(repeating: "s", count: 230)
        #expect(ConfigFixtures.issues(ConfigFixtures.demo(setting: "state", to: state)) == [
            "state: the path is 4050 bytes long; at most 4040 are allowed here (the system's 4095, less 55 for the names Herald derives from it)"
        ])
    }

    /// A loader's state is saved through `.<id>.json.<UUID>.tmp`.
    @Test func aLoaderIDLongerThanItsStateFileAllowsIsAnError() {
        let id = String(repeating: "l", count: 209)
        let object = ConfigFixtures.set(ConfigFixtures.demo, "loaders.\(id)", ["kind": "tiqav", "service": "tiqav", "every": "5m"])
        #expect(ConfigFixtures.issues(object) == ["loaders.\(id): the id is 209 bytes long; at most 208 fit in its state file's name"])
    }

    /// Without `outbox`, a post subscriber's journal is `<state>/outbox/<name>.jsonl`.
    @Test func aPostSubscribersNameNamesItsDefaultOutbox() {
        let name = String(repeating: "n", count: 242)
        var object = ConfigFixtures.withPosts
        let posts = (object["subscribers"] as? [String: Any])?["posts"]
        object = ConfigFixtures.set(object, "subscribers.posts", nil)
        object = ConfigFixtures.set(object, "subscribers.\(name)", posts)
        #expect(ConfigFixtures.issues(object) == [
            "subscribers.\(name): the name is 242 bytes long; at most 241 fit in its outbox file's name (or set \"outbox\")"
        ])
        object = ConfigFixtures.set(object, "subscribers.\(name).outbox", "var/outbox.jsonl")
        #expect(ConfigFixtures.issues(object) == [])
    }

    // MARK: Schedules

    @Test(arguments: [
        ("sandbox", "1ms", "loaders.home.every: 1ms is below the minimum of 100ms for a service on the sandbox (1s for a real one)"),
        ("sandbox", "99ms", "loaders.home.every: 99ms is below the minimum of 100ms for a service on the sandbox (1s for a real one)"),
        ("sandbox", "100ms", nil),
        ("https://api.example.com", "999ms", "loaders.home.every: 999ms is below the minimum of 1s (100ms for a service on the sandbox)"),
        ("https://api.example.com", "1s", nil),
    ] as [(String, String, String?)])
    func aLoaderScheduleHasAMinimumInterval(url: String, every: String, expected: String?) {
        var object = ConfigFixtures.demo(setting: "loaders.home.every", to: every)
        object = ConfigFixtures.set(object, "services.twitter.url", url)
        #expect(ConfigFixtures.issues(object) == (expected.map { [$0] } ?? []))
    }

    // MARK: Texts

    /// A status holds 280 characters, counted as the service counts them (Swift `Character`s,
    /// so `e` with a combining accent is one).
    @Test(arguments: [
        (String(repeating: "あ", count: 281), 281),
        (String(repeating: "a", count: 250) + " {{description}} " + String(repeating: "b", count: 30), 282),
        (String(repeating: "a", count: 280) + "{{description}}", nil),
        (String(repeating: "e\u{301}", count: 280), nil),
    ] as [(String, Int?)])
    func aTwitterTextWhoseLiteralPartCannotFitIsAnError(text: String, characters: Int?) {
        let object = ConfigFixtures.set(ConfigFixtures.withPosts, "subscribers.posts.rules.tweet.text", text)
        let expected = characters.map {
            ["subscribers.posts.rules.tweet.text: without its placeholders the text is already \($0) characters; a status holds at most 280"]
        }
        #expect(ConfigFixtures.issues(object) == (expected ?? []))
    }
}
