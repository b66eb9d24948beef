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
        .library(name: "HeraldServices", targets: ["HeraldServices"]),
        .library(name: "HeraldSandbox", targets: ["HeraldSandbox"]),
        .library(name: "HeraldHTTP", targets: ["HeraldHTTP"]),
        .library(name: "HeraldStatus", targets: ["HeraldStatus"]),
        .executable(name: "sandbox-server", targets: ["sandbox-server"]),
        .library(name: "HeraldLoaders", targets: ["HeraldLoaders"]),
        .library(name: "HeraldSubscribers", targets: ["HeraldSubscribers"]),
        .library(name: "HeraldRuntime", targets: ["HeraldRuntime"]),
        .library(name: "HeraldLifecycle", targets: ["HeraldLifecycle"]),
        .library(name: "HeraldNATS", targets: ["HeraldNATS"]),
        .library(name: "HeraldCluster", targets: ["HeraldCluster"]),
        .library(name: "HeraldTesting", targets: ["HeraldTesting"]),
    ],
    targets: [
        // The bus. Standard library, Synchronization and FoundationEssentials only,
        // so an app can take it alone.
        .target(name: "Herald", dependencies: ["HeraldSync"]),

        // The one lock of every module (a Mutex the thread sanitizer can see) and the Duration
        // helpers. Standard library and Synchronization only.
        .target(name: "HeraldSync"),

        // For the tests of code that uses the bus: a recording subscriber and a manual clock.
        // The bus and the lock only, so an app's test target can take it.
        .target(name: "HeraldTesting", dependencies: ["Herald", "HeraldSync"]),
        .testTarget(name: "HeraldTestingTests", dependencies: ["HeraldTesting", "Herald"]),

        // Threads and I/O above the bus: BlockingIOThread and NamedThread, the one POSIX socket
        // layer (HTTP server, HTTP client, NATS client), TLS and HMAC over the system's OpenSSL
        // loaded at run time. Foundation, Dispatch and Glibc; never imported by the bus.
        .target(name: "HeraldIO", dependencies: ["HeraldSync"]),
        .testTarget(name: "HeraldIOTests", dependencies: ["HeraldIO"]),

        // One lifecycle for every long-running part: Service, ServiceGroup (start in order, stop in
        // reverse on signals, a duration or a failure), graceful shutdown, UnixSignalsSequence.
        .target(name: "HeraldLifecycle", dependencies: ["HeraldSync"]),
        .testTarget(name: "HeraldLifecycleTests", dependencies: ["HeraldTesting", "HeraldLifecycle", "HeraldTestSupport"]),

        // A NATS client (core protocol, reconnect, request/reply) and the JetStream API it needs
        // (streams, consumers, acked publishes, pull consumers, key-value buckets). Foundation,
        // Dispatch, Glibc and the one lock only; the socket runs on a thread of its own.
        .target(name: "HeraldNATS", dependencies: ["HeraldSync", "HeraldIO"]),
        .testTarget(name: "HeraldNATSTests", dependencies: ["HeraldNATS", "HeraldIO", "HeraldTestSupport", "HeraldTesting", "HeraldSync"]),

        // The command-line tool. It imports the runtime (which offers what each command needs),
        // the status endpoint's reload types and the one lock.
        .executableTarget(name: "herald", dependencies: ["HeraldRuntime", "HeraldStatus", "HeraldSync", "HeraldIO"]),

        // Side-by-side benchmarks against Foundation and the standard library.
        .executableTarget(
            name: "herald-bench",
            dependencies: ["Herald", "HeraldSubscribers", "HeraldSync", "HeraldIO", "HeraldNATS", "HeraldTestSupport"],
            path: "Benchmarks/herald-bench"
        ),

        // Examples: each one a small program that reads as documentation.
        .executableTarget(
            name: "loader-notifications",
            dependencies: ["Herald"],
            path: "Examples/loader-notifications"
        ),

        // HTTP clients of the three services (Twitter-style API, Tiqav, NEC BaaS), OAuth 1.0a,
        // models and their JSON / XML parsing. Foundation only; knows nothing of the bus.
        .target(name: "HeraldServices", dependencies: ["HeraldSync", "HeraldIO"]),

        // The HTTP/1.1 server under the sandbox and the status endpoint: POSIX sockets on threads
        // of its own (never the cooperative pool), RFC 9112 request reading, limits, streams.
        .target(name: "HeraldHTTP", dependencies: ["HeraldSync", "HeraldIO"]),
        .testTarget(name: "HeraldHTTPTests", dependencies: ["HeraldTesting", "HeraldHTTP", "HeraldTestSupport", "HeraldSync", "HeraldIO"]),

        // A loopback HTTP/1.1 emulator of the three services, with fault injection.
        // It shares no code with HeraldServices so a client bug cannot hide behind its mirror.
        .target(name: "HeraldSandbox", dependencies: ["HeraldHTTP", "HeraldSync", "HeraldIO"]),

        .executableTarget(
            name: "sandbox-server",
            dependencies: ["HeraldSandbox"],
            path: "Examples/sandbox-server"
        ),

        // Helpers shared by the test targets: the one process runner, sandbox harness, settable date
        // and lock, a service group run until stopped, curl as a real client, nats-server, an HTTPS server.
        .target(name: "HeraldTestSupport", dependencies: ["HeraldSync", "HeraldLifecycle", "HeraldTesting", "HeraldSandbox", "HeraldServices", "HeraldIO"],
                path: "Tests/HeraldTestSupport", exclude: ["tls_server.py"]),
        .testTarget(
            name: "HeraldServicesTests", dependencies: ["HeraldTesting", "HeraldServices", "HeraldSandbox", "HeraldHTTP", "HeraldTestSupport", "HeraldSync", "HeraldIO"]
        ),
        .testTarget(name: "HeraldSandboxTests", dependencies: ["HeraldSandbox", "HeraldHTTP", "HeraldTestSupport", "HeraldSync", "HeraldIO"]),

        .testTarget(name: "HeraldTests", dependencies: ["HeraldTesting", "Herald", "HeraldTestSupport", "HeraldSync"]),
        .testTarget(
            name: "ExampleTests",
            dependencies: ["Herald", "HeraldTesting", "HeraldTestSupport"],
            path: "Tests/ExampleTests"
        ),

        // The daemon: loader actors, subscribers, config.json, schedules and wiring.
        .target(name: "HeraldLoaders", dependencies: ["Herald", "HeraldServices", "HeraldSync", "HeraldIO", "HeraldLifecycle"]),
        .target(name: "HeraldSubscribers", dependencies: ["Herald", "HeraldServices", "HeraldSync", "HeraldIO", "HeraldLifecycle"]),
        // The daemon's status endpoint: Prometheus metrics, /status, /events (SSE), the live page.
        .target(name: "HeraldStatus", dependencies: ["Herald", "HeraldHTTP", "HeraldLoaders", "HeraldSubscribers", "HeraldLifecycle", "HeraldSync"]),
        .testTarget(name: "HeraldStatusTests", dependencies: [
            "HeraldTesting", "HeraldStatus", "Herald", "HeraldHTTP", "HeraldLifecycle", "HeraldLoaders", "HeraldServices", "HeraldSubscribers", "HeraldTestSupport",
            "HeraldSync", "HeraldIO",
        ]),
        // Several daemons on NATS JetStream: the event bridge, leased loaders with their state in
        // a key-value bucket, and one shared queue of post intents.
        .target(
            name: "HeraldCluster",
            dependencies: ["Herald", "HeraldServices", "HeraldLoaders", "HeraldSubscribers", "HeraldLifecycle", "HeraldSync", "HeraldIO", "HeraldNATS"]
        ),
        .testTarget(name: "HeraldClusterTests", dependencies: [
            "HeraldTesting", "HeraldCluster", "Herald", "HeraldLifecycle", "HeraldLoaders", "HeraldNATS", "HeraldSubscribers", "HeraldServices", "HeraldTestSupport", "HeraldSync",
        ]),
        .target(
            name: "HeraldRuntime",
            dependencies: ["Herald", "HeraldServices", "HeraldLoaders", "HeraldSubscribers", "HeraldSandbox", "HeraldLifecycle", "HeraldSync",
                           "HeraldIO", "HeraldStatus", "HeraldCluster", "HeraldNATS"]
        ),
        .executableTarget(
            name: "timeline-observer",
            dependencies: ["Herald", "HeraldLoaders", "HeraldServices", "HeraldSandbox"],
            path: "Examples/timeline-observer"
        ),
        .executableTarget(
            name: "tiqav-viewer",
            dependencies: ["Herald", "HeraldLoaders", "HeraldServices", "HeraldSandbox"],
            path: "Examples/tiqav-viewer"
        ),
        .executableTarget(
            name: "todo-flow",
            dependencies: ["Herald", "HeraldLoaders", "HeraldServices", "HeraldSandbox"],
            path: "Examples/todo-flow"
        ),
        .testTarget(name: "HeraldLoadersTests", dependencies: ["HeraldTesting", "Herald", "HeraldIO", "HeraldLoaders", "HeraldServices", "HeraldSandbox", "HeraldSync", "HeraldTestSupport"]),
        .testTarget(name: "HeraldRuntimeTests", dependencies: [
            "HeraldTesting", "Herald", "HeraldRuntime", "HeraldCluster", "HeraldLifecycle", "HeraldStatus", "HeraldSubscribers", "HeraldLoaders", "HeraldServices", "HeraldSandbox", "HeraldTestSupport", "HeraldSync",
            "HeraldIO",
        ]),
        .testTarget(name: "HeraldCLITests", dependencies: ["HeraldTestSupport", "HeraldSync", "HeraldNATS"]),
        // Test-only: `herald run` with a fault hook that kills the process at a post scheduler's
        // fault point, for the crash tests (the shipping binary has no crash hook).
        .executableTarget(
            name: "herald-crash-run",
            dependencies: ["HeraldRuntime", "HeraldSubscribers"],
            path: "Tests/herald-crash-run"
        ),
    ],
    swiftLanguageModes: [.v6]
)
