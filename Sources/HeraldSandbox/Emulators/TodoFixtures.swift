/// The todos the sandbox's growing bucket is filled from, English and Japanese.
enum TodoFixtures {
    static let descriptions = [
        "Buy milk on the way home",
        "牛乳を買って帰る",
        "Reply to Sakura's mail about the meetup",
        "部屋の掃除をする 🧹",
        "Water the plants 🌱",
        "レポートを金曜までに提出する",
        "Book a table for Saturday",
        "ラーメン屋を予約する 🍜",
    ]

    /// The fields of the todo at `index` (0-based): `{"description": "… #n", "done": false}`.
    static func fields(at index: Int) -> [(String, SandboxJSON)] {
        [("description", .string("\(descriptions[index % descriptions.count]) #\(index + 1)")), ("done", .bool(false))]
    }
}
