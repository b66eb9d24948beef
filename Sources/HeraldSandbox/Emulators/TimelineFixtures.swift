/// The people and texts the sandbox's timeline is grown from, Japanese and emoji included.
enum TimelineFixtures {
    struct Person: Sendable {
        var id: UInt64
        var name: String
        var screenName: String
    }

    static let people = [
        Person(id: 2_244_994_945, name: "Twitter Dev", screenName: "TwitterDev"),
        Person(id: 9_007_199_254_740_993, name: "さくら", screenName: "sakura_dev"),
        Person(id: 783_214, name: "Herald Bot 🤖", screenName: "herald_bot"),
        // The account seed 001 read; the shipped config.json's `itmedia` loader follows it.
        Person(id: 14_178_467, name: "ITmedia NEWS", screenName: "itmedia"),
    ]

    static let texts = [
        "Good morning from the sandbox ☀️",
        "今日はいい天気ですね。散歩に行きましょう 🌸",
        "Fish & chips <3 — entities must survive both JSON and XML",
        "Swift 6 strict concurrency: no data races 🚀",
        "東京タワーから富士山が見えた！🗻",
        "Reading the home timeline with since_id and max_id",
        "絵文字テスト 🎉👍🏽👨‍👩‍👧 and \"quotes\"",
        "Periodic pulls should see this one as new ✨",
        "ラーメン食べたい 🍜",
        "A tweet with a newline\nin the middle",
    ]

    static func text(at index: Int) -> String {
        "\(texts[index % texts.count]) #\(index)"
    }

    static func person(at index: Int) -> Person {
        people[index % people.count]
    }
}
