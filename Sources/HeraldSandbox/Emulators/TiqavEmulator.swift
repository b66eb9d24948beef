import Foundation

/// Emulates the Tiqav image search: `/search/random.json`, `/search.json?q=` and the image
/// files under `/img/`.
struct TiqavEmulator: Sendable {
    struct Image: Sendable {
        var id: String
        var ext: String
        var width: Int
        var height: Int
        var tags: [String]
    }

    static let images = [
        Image(id: "3om", ext: "jpg", width: 1036, height: 1442, tags: ["猫", "cat", "かわいい"]),
        Image(id: "a1b", ext: "png", width: 640, height: 480, tags: ["swift", "bird", "鳥"]),
        Image(id: "zz9", ext: "gif", width: 320, height: 240, tags: ["ラーメン", "ramen", "food"]),
        Image(id: "k2p", ext: "jpg", width: 800, height: 600, tags: ["富士山", "mountain"]),
        Image(id: "m0m", ext: "jpg", width: 500, height: 500, tags: ["cat", "猫", "sleep"]),
        Image(id: "q7x", ext: "png", width: 1280, height: 720, tags: ["桜", "sakura", "spring"]),
        Image(id: "r4d", ext: "jpg", width: 300, height: 900, tags: ["tower", "東京"]),
        Image(id: "u8e", ext: "gif", width: 240, height: 240, tags: ["emoji", "🎉", "party"]),
    ]

    /// The counter that drives `random.json`, so successive calls differ but runs repeat.
    let draws = Locked(SandboxRandom(seed: 0x7469_7161_76))

    func handle(_ request: SandboxRequest) -> SandboxResponse {
        let path = request.path
        if path == "/search/random.json" {
            let picked = draws.withLock { random -> [Image] in
                var pool = Self.images
                pool.shuffle(using: &random)
                return Array(pool.prefix(5))
            }
            return .json(200, .array(picked.map(json)))
        }
        if path == "/search.json" {
            let query = (request.query("q") ?? "").trimmingCharacters(in: .whitespaces).lowercased()
            guard !query.isEmpty else { return .json(400, .object([("error", .string("q is required"))])) }
            let found = Self.images.filter { $0.tags.contains { $0.lowercased().contains(query) } }
            guard !found.isEmpty else { return SandboxResponse(status: 404) }
            return .json(200, .array(found.map(json)))
        }
        if path.hasPrefix("/img/") {
            let file = String(path.dropFirst(5))
            guard let image = Self.images.first(where: { file == "\($0.id).\($0.ext)" || file == "\($0.id).th.jpg" }) else {
                return SandboxResponse(status: 404)
            }
            let type = file.hasSuffix(".png") ? "image/png" : file.hasSuffix(".gif") ? "image/gif" : "image/jpeg"
            return SandboxResponse(status: 200, headers: [("Content-Type", type)], body: Data("sandbox image \(file) \(image.width)x\(image.height)".utf8))
        }
        return SandboxResponse(status: 404)
    }

    private func json(_ image: Image) -> SandboxJSON {
        .object([
            ("id", .string(image.id)), ("ext", .string(image.ext)), ("height", .int(Int64(image.height))),
            ("width", .int(Int64(image.width))), ("source_url", .string("http://example.com/source/\(image.id)")),
        ])
    }
}
