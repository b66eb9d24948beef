import Foundation

extension ConfigLoader {
    /// The files a subscriber writes, checked now rather than failing at every write of `run`:
    /// paths the system cannot open (``PathLimits``), and log files that are directories.
    func checkFiles(of subscriber: SubscriberConfiguration, baseDirectory: URL, _ reader: ConfigReader) {
        let path = "subscribers.\(subscriber.name)"
        let files: [(key: String, file: String, room: Int)]
        switch subscriber {
        case .file(let archive):
            // Rotation writes events.1000.jsonl beside it, repair events.jsonl.torn.
            files = [("path", archive.path, ".1000".utf8.count)]
        case .post(let posting):
            if let outbox = posting.outbox {
                files = [("outbox", outbox, ".compact".utf8.count)]
            } else {
                files = []
                let name = subscriber.name
                let allowed = PathLimits.nameMax - PathLimits.outboxFileExtra
                if name.utf8.contains(0) {
                    reader.report(path, "contains a NUL character, which its outbox file's name cannot hold (or set \"outbox\")")
                } else if name.utf8.count > allowed {
                    reader.report(path, "the name is \(name.utf8.count) bytes long; at most \(allowed) fit in its outbox file's name (or set \"outbox\")")
                }
            }
        case .log(let log):
            if case .file(let file) = log.output {
                files = [("output", file, 0)]
            } else {
                files = []
            }
        }
        for (key, file, room) in files {
            if let problem = PathLimits.problem(file, against: baseDirectory, room: room) {
                reader.report("\(path).\(key)", problem)
                continue
            }
            var isDirectory: ObjCBool = false
            let resolved = Self.resolve(file, against: baseDirectory).path
            if FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory), isDirectory.boolValue {
                reader.report("\(path).\(key)", "\"\(file)\" is a directory")
            }
        }
    }

    /// The state directory, with room for the longest name kept in it: a loader's state file,
    /// a post subscriber's default outbox.
    func checkStateDirectory(_ state: String, loaders: [String: LoaderConfiguration], subscribers: [String: SubscriberConfiguration],
                             baseDirectory: URL, _ reader: ConfigReader) {
        var longest = loaders.keys.map { $0.utf8.count + PathLimits.loaderStateFileExtra }.max() ?? 0
        for (name, subscriber) in subscribers {
            guard case .post(let posting) = subscriber, posting.outbox == nil else { continue }
            longest = max(longest, "outbox/".utf8.count + name.utf8.count + PathLimits.outboxFileExtra)
        }
        let room = longest == 0 ? 0 : "/".utf8.count + longest
        if let problem = PathLimits.problem(state, against: baseDirectory, isDirectory: true, room: room) {
            reader.report("state", problem)
        }
    }
}
