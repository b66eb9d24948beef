import Foundation
import HeraldServices

/// Collects upload progress reports from the callback.
final class ProgressRecorder: @unchecked Sendable {
    // @unchecked Sendable: `reports` is only touched while holding `lock`.
    private let lock = NSLock()
    private var reports: [UploadProgress] = []

    func append(_ report: UploadProgress) { lock.withLock { reports.append(report) } }
    var all: [UploadProgress] { lock.withLock { reports } }
}
