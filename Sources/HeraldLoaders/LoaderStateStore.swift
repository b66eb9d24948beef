import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where loaders keep their ``LoaderState``: one small JSON file per loader, `<directory>/<id>.json`.
///
/// Writes are atomic (a temporary file in the same directory, then `rename`), so a crash leaves
/// the old state or the new one, never half of each. A file that cannot be read is renamed to
/// `<id>.json.corrupt-<unix time>` and reported, never fatal. With no directory, nothing is kept.
public struct LoaderStateStore: Sendable {
    /// What reading a state file found.
    public enum ReadResult: Sendable, Hashable {
        /// No file (or no directory configured): start afresh.
        case missing
        /// The stored state.
        case loaded(LoaderState)
        /// The file could not be read; it was moved to `movedTo` (nil if the rename failed too).
        case corrupt(path: String, movedTo: String?, reason: String)
    }

    /// The directory, or nil to keep nothing.
    public let directory: URL?

    /// Creates a store over `directory` (created on first write).
    public init(directory: URL?) {
        self.directory = directory
    }

    /// A store that keeps nothing.
    public static let none = LoaderStateStore(directory: nil)

    /// The state file of loader `id`.
    public func fileURL(for id: String) -> URL? {
        directory?.appendingPathComponent("\(id).json")
    }

    /// Reads loader `id`'s state, setting a corrupt file aside.
    public func read(_ id: String) -> ReadResult {
        guard let url = fileURL(for: id) else { return .missing }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            // Missing is a fresh start; there but unreadable (permissions, a directory) is
            // reported and set aside like a corrupt file, never silently overwritten.
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return .missing }
            return setAside(url, reason: isDirectory.boolValue ? "it is a directory" : "it cannot be read")
        }
        do {
            return .loaded(try JSONDecoder().decode(LoaderState.self, from: data))
        } catch {
            return setAside(url, reason: Self.reason(error))
        }
    }

    private func setAside(_ url: URL, reason: String) -> ReadResult {
        let aside = url.path + ".corrupt-\(Int(Date().timeIntervalSince1970))"
        let moved = rename(url.path, aside) == 0 ? aside : nil
        return .corrupt(path: url.path, movedTo: moved, reason: reason)
    }

    /// Writes loader `id`'s state atomically (mode 0600).
    ///
    /// - Throws: `CocoaError` or `POSIXError` when the directory or file cannot be written.
    public func write(_ state: LoaderState, for id: String) throws {
        guard let directory, let url = fileURL(for: id) else { return }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(state)
        let temporary = directory.appendingPathComponent(".\(id).json.\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: data,
                                             attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path])
        }
        guard rename(temporary.path, url.path) == 0 else {
            let code = errno
            try? FileManager.default.removeItem(at: temporary)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): "not JSON: \(context.debugDescription)"
        case DecodingError.keyNotFound(let key, _): "missing \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        default: String(describing: error)
        }
    }
}
