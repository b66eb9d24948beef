// swift-tools-version: 6.0
// Herald: a typed, NotificationCenter-inspired event bus for Swift, and a daemon on top of it.
// Zero package dependencies: the toolchain's libraries only.

import PackageDescription

let package = Package(
    name: "Herald",
    products: [
        .library(name: "Herald", targets: ["Herald"]),
        .executable(name: "herald", targets: ["herald"]),
        .executable(name: "herald-bench", targets: ["herald-bench"]),
    ],
    targets: [
        // The bus. Standard library, Synchronization and FoundationEssentials only,
        // so an app can take it alone.
        .target(name: "Herald"),

        // The command-line tool. Until the daemon lands it runs the bus demo.
        .executableTarget(name: "herald", dependencies: ["Herald"]),

        // Side-by-side benchmarks against Foundation and the standard library.
        .executableTarget(
            name: "herald-bench",
            dependencies: ["Herald"],
            path: "Benchmarks/herald-bench"
        ),

        // Examples: each one a small program that reads as documentation.
        .executableTarget(
            name: "loader-notifications",
            dependencies: ["Herald"],
            path: "Examples/loader-notifications"
        ),

        .testTarget(name: "HeraldTests", dependencies: ["Herald"]),
        .testTarget(
            name: "ExampleTests",
            dependencies: ["Herald"],
            path: "Tests/ExampleTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
