import Foundation
import HeraldIO
import HeraldSync
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which media files a ``TwitterPostService`` may read.
public enum MediaAccess: Sendable, Hashable {
    /// Any file (one daemon alone: its own rules, from its own config, name the files).
    case anywhere
    /// Only files inside this directory, once symbolic links and `..` are resolved (a cluster
    /// node: an intent taken from the post queue names a path another node rendered).
    case within(URL)
    /// No media at all (a cluster node without `cluster.mediaDirectory`).
    case none
}

/// The video a status intent names, read for a post service: on a thread of its own (never on
/// the cooperative pool), only a regular file, at most a size bound, and only where
/// ``MediaAccess`` allows.
enum MediaFile {
    /// Where media files are read.
    private static let io = BlockingIOThread(name: "herald.media-io")

    /// The largest video read (the services' limit for videos is 15 MB; a larger file is
    /// refused before it is read).
    static let maxVideoBytes = 15 * 1024 * 1024

    /// The file `media` names: absolute, or relative to `baseDirectory`.
    static func url(_ media: String, baseDirectory: URL) -> URL {
        media.hasPrefix("/") ? URL(fileURLWithPath: media) : baseDirectory.appendingPathComponent(media)
    }

    /// The bytes of the MP4 `media` (absolute, or relative to `baseDirectory`).
    ///
    /// - Throws: ``PostServiceError`` (permanent) for a file that is not an MP4, is not allowed
    ///   by `access`, is larger than ``maxVideoBytes``, or cannot be read.
    static func readVideo(_ media: String, baseDirectory: URL, access: MediaAccess) async throws -> Data {
        guard url(media, baseDirectory: baseDirectory).pathExtension.lowercased() == "mp4" else {
            throw PostServiceError("media \(media): only MP4 videos are posted (the file's name must end in .mp4)")
        }
        return try await read(media, baseDirectory: baseDirectory, access: access, maxBytes: maxVideoBytes)
    }

    /// The bytes of `media` (absolute, or relative to `baseDirectory`), if `access` allows it,
    /// it is a regular file and it holds at most `maxBytes`.
    ///
    /// Under ``MediaAccess/within(_:)`` the path is resolved by `realpath(3)` (every link and
    /// `..`, and every component must exist), checked to lie inside the directory (resolved the
    /// same way), and that resolved path is opened without following a link: a link swapped in
    /// afterwards is refused, not followed.
    ///
    /// - Throws: ``PostServiceError`` (permanent).
    static func read(_ media: String, baseDirectory: URL, access: MediaAccess, maxBytes: Int) async throws -> Data {
        let url = url(media, baseDirectory: baseDirectory)
        return try await io.run { try readNow(url, media, access, maxBytes) }
    }

    /// Runs on the media thread: resolving, opening and reading block.
    private static func readNow(_ url: URL, _ media: String, _ access: MediaAccess, _ maxBytes: Int) throws -> Data {
        var path = url.path
        var flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC
        switch access {
        case .anywhere:
            break
        case .none:
            throw PostServiceError("media \(media): this node posts no media (set cluster.mediaDirectory to the directory media may come from)")
        case .within(let directory):
            guard let root = realPath(directory.path) else {
                throw PostServiceError("media \(media): cluster.mediaDirectory (\(directory.path)) cannot be resolved")
            }
            guard let resolved = realPath(path) else {
                throw PostServiceError("media \(media) cannot be read: no such file inside cluster.mediaDirectory (\(directory.path))")
            }
            guard resolved.hasPrefix(root.hasSuffix("/") ? root : root + "/") else {
                throw PostServiceError("media \(media) is outside cluster.mediaDirectory (\(directory.path)): refused")
            }
            path = resolved
            flags |= O_NOFOLLOW
        }
        let descriptor = open(path, flags)
        guard descriptor >= 0 else {
            throw PostServiceError("media \(media) cannot be read: \(String(cString: strerror(errno)))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            throw PostServiceError("media \(media) is not a regular file")
        }
        guard Int(status.st_size) <= maxBytes else {
            throw PostServiceError("media \(media) is \(status.st_size) bytes; at most \(maxBytes) are posted")
        }
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            throw PostServiceError("media \(media) cannot be read: \((error as NSError).localizedDescription)")
        }
    }

    /// `realpath(3)`: the absolute path with every link and `..` resolved; nil when any
    /// component does not exist.
    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
