// Seed 003 as a terminal program: each pull of Tiqav's random images prints their URLs.
//
//     swift run tiqav-viewer [--pulls N]
import Foundation
import Herald
import HeraldLoaders
import HeraldSandbox
import HeraldServices

let arguments = CommandLine.arguments
let pulls = arguments.firstIndex(of: "--pulls").flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil } ?? 3

let sandbox = try await Sandbox.start()
let client = TiqavClient(baseURL: sandbox.baseURL, imageBaseURL: sandbox.imageBaseURL, transport: SchemeRoutingTransport())
let bus = EventBus()
let viewer = try TiqavLoader(id: "viewer", client: client, bus: bus)

// The "table view": one line per image, the new ones marked.
let table = try bus.subscribe(to: TiqavLoaded.self) { event in
    let fresh = Set(event.newImages.map(\.id))
    for (image, url) in zip(event.images, event.imageURLs) {
        let size = [image.width, image.height].compactMap { $0 }.map(String.init).joined(separator: "x")
        print("\(fresh.contains(image.id) ? "*" : " ") \(url) \(size)")
    }
}
let errors = try bus.subscribe(to: LoadFailed.self) { print("pull failed: \($0.error)") }

for pull in 1...max(1, pulls) {   // the reload button
    print("pull \(pull):")
    _ = await viewer.load()
}

withExtendedLifetime([table, errors]) {}
_ = await bus.shutdown()
await sandbox.stop()
