import Foundation
import Testing

/// Every test target declares in `Package.swift` exactly the package's modules its files
/// import: none reached only through another target's dependencies (which breaks when that
/// target changes), none declared and unused.
@Suite struct TestTargetImportsTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A target as the manifest declares it.
    struct Declared {
        var kind: String
        var name: String
        var dependencies: Set<String>
        var path: String?
    }

    /// The targets of `Package.swift`, read from its text (`.target(`, `.testTarget(`,
    /// `.executableTarget(` with a `name:`, string `dependencies:` and an optional `path:`).
    static func targets() throws -> [Declared] {
        let manifest = try String(contentsOf: packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        var targets: [Declared] = []
        var rest = Substring(manifest)
        while let start = rest.range(of: #"\.(target|testTarget|executableTarget)\("#, options: .regularExpression) {
            let kind = String(rest[start].dropFirst().dropLast())
            // The call's text: up to its matching parenthesis.
            var depth = 0
            var end = start.upperBound
            var index = start.lowerBound
            while index < rest.endIndex {
                if rest[index] == "(" { depth += 1 }
                if rest[index] == ")" { depth -= 1; if depth == 0 { end = index; break } }
                index = rest.index(after: index)
            }
            let call = rest[start.upperBound..<end]
            func strings(after label: String, list: Bool) -> [String] {
                guard let at = call.range(of: label + ":") else { return [] }
                let tail = call[at.upperBound...]
                let scope = list ? tail.prefix { $0 != "]" } : tail.prefix { $0 != "," && $0 != ")" }
                return scope.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
            }
            if let name = strings(after: "name", list: false).first {
                targets.append(Declared(kind: kind, name: name, dependencies: Set(strings(after: "dependencies", list: true)),
                                        path: strings(after: "path", list: false).first))
            }
            rest = rest[end...]
        }
        return targets
    }

    /// The modules `text` imports (`import X`, `@testable import X`, `@_spi(Y) import X`).
    static func imports(_ text: String) -> Set<String> {
        var modules: Set<String> = []
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ").filter { !$0.hasPrefix("@") }
            if words.count == 2, words[0] == "import" { modules.insert(String(words[1])) }
        }
        return modules
    }

    @Test func everyTestTargetDeclaresWhatItImports() throws {
        let targets = try Self.targets()
        let modules = Set(targets.map(\.name))
        let tests = targets.filter { $0.kind == "testTarget" }
        #expect(tests.count >= 10, "the manifest's test targets were not found: \(tests.map(\.name))")
        for target in tests {
            let directory = Self.packageRoot.appendingPathComponent(target.path ?? "Tests/\(target.name)")
            var imported: Set<String> = []
            let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
            for file in files where file.pathExtension == "swift" {
                imported.formUnion(Self.imports(try String(contentsOf: file, encoding: .utf8)))
            }
            let used = imported.intersection(modules).subtracting([target.name])
            #expect(used.subtracting(target.dependencies).isEmpty,
                    "\(target.name) imports \(used.subtracting(target.dependencies).sorted()) without declaring them")
            #expect(target.dependencies.subtracting(used).isEmpty,
                    "\(target.name) declares \(target.dependencies.subtracting(used).sorted()) and imports none of them")
        }
    }
}
