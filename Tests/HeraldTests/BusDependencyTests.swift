import Foundation
import HeraldTestSupport
import Testing

/// The README promises that the bus (`Herald`, and `HeraldSync` under it) needs only the
/// standard library, Synchronization and FoundationEssentials, so an app can take it alone.
/// These tests keep the promise: the sources' `import` lines, and the modules the compiler
/// actually loaded to build them (its loaded-module trace), stay inside an allow-list.
@Suite struct BusDependencyTests {
    /// What the bus's sources may import.
    static let allowedImports: Set<String> = ["Synchronization", "FoundationEssentials", "HeraldSync"]

    /// What the compiler may load to build the bus: the standard library's parts, the C library
    /// (FoundationEssentials' own imports bring it), Synchronization, FoundationEssentials and
    /// its private modules, and the bus's own two modules.
    static let allowedModules: Set<String> = [
        "Swift", "SwiftOnoneSupport", "_Concurrency", "_StringProcessing", "_Volatile", "_Builtin_float",
        "Glibc", "SwiftGlibc", "Darwin", "Synchronization",
        "FoundationEssentials", "_FoundationCollections", "_FoundationCShims",
        "Herald", "HeraldSync",
    ]

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test(arguments: ["Herald", "HeraldSync"])
    func busSourcesImportOnlyTheStandardLibrarySynchronizationAndFoundationEssentials(target: String) throws {
        let files = try Self.swiftFiles(in: Self.packageRoot.appendingPathComponent("Sources/\(target)"))
        #expect(!files.isEmpty)
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for module in Self.importedModules(text) where !Self.allowedImports.contains(module) {
                Issue.record("\(target)/\(file.lastPathComponent) imports \(module), outside the bus's allow-list \(Self.allowedImports.sorted())")
            }
        }
    }

    /// The compiler's own trace of the modules it loaded, from a fresh compile of the two modules'
    /// sources (not the build directory's dependency files, which an incremental build leaves
    /// stale for sources that were not recompiled).
    @Test func busIsBuiltFromTheStandardLibrarySynchronizationAndFoundationEssentialsAlone() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-bus-modules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sync = try Self.swiftFiles(in: Self.packageRoot.appendingPathComponent("Sources/HeraldSync")).map(\.path)
        let bus = try Self.swiftFiles(in: Self.packageRoot.appendingPathComponent("Sources/Herald")).map(\.path)
        let syncTrace = directory.appendingPathComponent("HeraldSync.trace.json")
        let busTrace = directory.appendingPathComponent("Herald.trace.json")
        let first = try await Tool.run("/usr/bin/env", ["swiftc", "-emit-module", "-module-name", "HeraldSync", "-parse-as-library",
                                                        "-swift-version", "6", "-emit-module-path", directory.appendingPathComponent("HeraldSync.swiftmodule").path,
                                                        "-emit-loaded-module-trace-path", syncTrace.path] + sync)
        try #require(first.status == 0, "swiftc HeraldSync: \(first.stderr)")
        let second = try await Tool.run("/usr/bin/env", ["swiftc", "-typecheck", "-module-name", "Herald", "-parse-as-library", "-swift-version", "6",
                                                         "-I", directory.path, "-emit-loaded-module-trace-path", busTrace.path] + bus)
        try #require(second.status == 0, "swiftc Herald: \(second.stderr)")
        for (target, trace) in [("HeraldSync", syncTrace), ("Herald", busTrace)] {
            let object = try JSONSerialization.jsonObject(with: Data(contentsOf: trace)) as? [String: Any]
            let paths = try #require(object?["swiftmodules"] as? [String], "no swiftmodules in \(trace.path)")
            let modules = Self.loadedModules(paths.joined(separator: " "))
            #expect(modules.contains("Swift"), "the trace names no module at all: \(trace.path)")
            #expect(modules.subtracting(Self.allowedModules).isEmpty,
                    "building \(target) loaded \(modules.subtracting(Self.allowedModules).sorted()), outside the bus's allow-list")
        }
    }

    @Test func theChecksSeeAForbiddenModule() {
        // The scanners themselves: an import of Foundation (outside `#if canImport(FoundationEssentials)`'s
        // else branch) and a loaded Foundation.swiftmodule are reported.
        let source = """
            #if canImport(FoundationEssentials)
            import FoundationEssentials
            #else
            import Foundation
            #endif
            @preconcurrency import Dispatch
            """
        #expect(Self.importedModules(source) == ["FoundationEssentials", "Dispatch"])
        let dependencies = "x.o : /opt/swift/usr/lib/swift/linux/Foundation.swiftmodule/x86_64-unknown-linux-gnu.swiftmodule \\\n /work/.build/debug/Modules/HeraldSync.swiftmodule"
        #expect(Self.loadedModules(dependencies) == ["Foundation", "HeraldSync"])
    }

    /// The modules a source file imports on this platform: `import X` lines (with any
    /// attribute), skipping the `#else` branch of `#if canImport(Y)` when Y exists here, and the
    /// `#if` branch when it does not.
    static func importedModules(_ text: String) -> [String] {
        var modules: [String] = []
        // One entry per open #if: whether its current branch is taken.
        var taken: [Bool] = []
        for rawLine in text.split(separator: "\n") {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#if ") {
                taken.append(Self.evaluate(String(line.dropFirst(4))))
            } else if line.hasPrefix("#elseif ") {
                if let last = taken.popLast() { taken.append(!last && Self.evaluate(String(line.dropFirst(8)))) }
            } else if line == "#else" {
                if let last = taken.popLast() { taken.append(!last) }
            } else if line == "#endif" {
                _ = taken.popLast()
            } else if taken.allSatisfy({ $0 }) {
                let words = line.split(separator: " ").filter { !$0.hasPrefix("@") }
                if words.count >= 2, words[0] == "import" {
                    modules.append(String(words[1].split(separator: ".").first ?? words[1]))
                }
            }
        }
        return modules
    }

    /// `canImport(X)` for the modules the bus tests for; anything else counts as taken, so an
    /// unknown condition cannot hide an import.
    static func evaluate(_ condition: String) -> Bool {
        switch condition.trimmingCharacters(in: .whitespaces) {
        case "canImport(FoundationEssentials)":
            #if canImport(FoundationEssentials)
            return true
            #else
            return false
            #endif
        case "canImport(Glibc)":
            #if canImport(Glibc)
            return true
            #else
            return false
            #endif
        case "canImport(Darwin)":
            #if canImport(Darwin)
            return true
            #else
            return false
            #endif
        default:
            return true
        }
    }

    /// The module names of the `.swiftmodule` / `.swiftinterface` paths in a dependency file.
    static func loadedModules(_ text: String) -> Set<String> {
        var modules: Set<String> = []
        for token in text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\\" }) {
            for component in token.split(separator: "/") where component.hasSuffix(".swiftmodule") {
                modules.insert(String(component.dropLast(".swiftmodule".count)))
                break
            }
        }
        return modules
    }

    static func swiftFiles(in directory: URL) throws -> [URL] {
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
    }
}
