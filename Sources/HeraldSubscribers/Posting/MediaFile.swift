import Foundation
import HeraldSync

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

/// The video a status intent names, read for a post service: on a thread of its own (up to the
/// service's limit, 15 MB, never on the cooperative pool), and only where ``MediaAccess`` allows.
enum MediaFile {
    /// Where media files are read.
    private static let io = BlockingIOThread(name: "herald.media-io")

    /// The file `media` names: absolute, or relative to `baseDirectory`.
    static func url(_ media: String, baseDirectory: URL) -> URL {
        media.hasPrefix("/") ? URL(fileURLWithPath: media) : baseDirectory.appendingPathComponent(media)
    }

    /// The bytes of the MP4 `media` (absolute, or relative to `baseDirectory`).
    ///
    /// - Throws: ``PostServiceError`` (permanent) for a file that is not an MP4, is not allowed
    ///   by `access`, or cannot be read.
    static func readVideo(_ media: String, baseDirectory: URL, access: MediaAccess) async throws -> Data {
        guard url(media, baseDirectory: baseDirectory).pathExtension.lowercased() == "mp4" else {
            throw PostServiceError("media \(media): only MP4 videos are posted (the file's name must end in .mp4)")
        }
        return try await read(media, baseDirectory: baseDirectory, access: access)
    }

    /// The bytes of `media` (absolute, or relative to `baseDirectory`), if `access` allows it and
    /// it holds at most `maxBytes`.
    ///
    /// - Throws: ``PostServiceError`` (permanent) for a file that is not allowed, too large, or
    ///   cannot be read.
    static func read(_ media: String, baseDirectory: URL, access: MediaAccess, maxBytes: Int? = nil) async throws -> Data {
        let url = url(media, baseDirectory: baseDirectory)
        do {
            return try await io.run {
                let file = try permitted(url, media, access)
                if let maxBytes {
                    let size = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue ?? 0
                    guard size <= maxBytes else { throw PostServiceError("media \(media) is \(size) bytes; at most \(maxBytes) are posted") }
                }
                return try Data(contentsOf: file)
            }
        } catch let error as PostServiceError {
            throw error
        } catch {
            throw PostServiceError("media \(media) cannot be read: \((error as NSError).localizedDescription)")
        }
    }

    /// The file to read for `url` (written `media`), its links resolved, if `access` allows it.
    /// Runs on the media thread: resolving links reads the file system.
    static func permitted(_ url: URL, _ media: String, _ access: MediaAccess) throws -> URL {
        switch access {
        case .anywhere:
            return url
        case .none:
            throw PostServiceError("media \(media): this node posts no media (set cluster.mediaDirectory to the directory media may come from)")
        case .within(let directory):
            let root = directory.resolvingSymlinksInPath().standardizedFileURL.path
            let file = url.resolvingSymlinksInPath().standardizedFileURL
            let prefix = root.hasSuffix("/") ? root : root + "/"
            guard file.path.hasPrefix(prefix) else {
                throw PostServiceError("media \(media) is outside cluster.mediaDirectory (\(directory.path)): refused")
            }
            return file
        }
    }
}
