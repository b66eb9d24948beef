import Foundation

/// The limits Linux puts on paths, checked when the configuration is read: a path the system
/// cannot open would otherwise fail every write of `herald run`, which goes on running.
///
/// Lengths are counted in bytes of UTF-8, as the kernel counts them.
enum PathLimits {
    /// `NAME_MAX`: the bytes of one name in a path.
    static let nameMax = 255
    /// `PATH_MAX` less its terminating NUL: the bytes of a whole path.
    static let pathMax = 4095
    /// Bytes a loader's state file adds to its id: `.<id>.json.<UUID>.tmp` (LoaderStateStore).
    static let loaderStateFileExtra = ".".utf8.count + ".json.".utf8.count + 36 + ".tmp".utf8.count
    /// Bytes a post subscriber's default outbox adds to its name: `<name>.jsonl`, and the
    /// `.compact` written beside it.
    static let outboxFileExtra = ".jsonl.compact".utf8.count

    /// What is wrong with a path, or nil.
    ///
    /// - Parameters:
    ///   - written: the path as written, relative to `base` unless absolute.
    ///   - isDirectory: true for a directory, whose own name needs no room.
    ///   - room: bytes Herald adds to the file's name for the files it writes beside it
    ///     (`.torn`, `.compact`, a rotation's `.1000`), or for a directory, to the whole path
    ///     for the files it keeps in it.
    static func problem(_ written: String, against base: URL, isDirectory: Bool = false, room: Int = 0) -> String? {
        if written.utf8.contains(0) { return "contains a NUL character, which no file name can hold" }
        let resolved = ConfigLoader.resolve(written, against: base).path
        let names = resolved.split(separator: "/")
        let directoryNames = isDirectory ? names[...] : names.dropLast()
        if let long = directoryNames.first(where: { $0.utf8.count > nameMax }) {
            return "a name in the path is \(long.utf8.count) bytes long; the system allows at most \(nameMax)"
        }
        if !isDirectory, let name = names.last, name.utf8.count > nameMax - room {
            return "the file name is \(name.utf8.count) bytes long; " + allowance(nameMax, room: room)
        }
        let length = resolved.utf8.count
        if length > pathMax - room {
            return "the path is \(length) bytes long; " + allowance(pathMax, room: room)
        }
        return nil
    }

    private static func allowance(_ limit: Int, room: Int) -> String {
        room == 0
            ? "the system allows at most \(limit)"
            : "at most \(limit - room) are allowed here (the system's \(limit), less \(room) for the names Herald derives from it)"
    }
}
