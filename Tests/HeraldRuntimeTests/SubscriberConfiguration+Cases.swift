import HeraldRuntime

/// Each case's settings, or nil for the other kinds, so a test can `#require` the kind it expects.
extension SubscriberConfiguration {
    var logSettings: LogSettings? {
        if case .log(let settings) = self { settings } else { nil }
    }

    var archive: ArchiveSettings? {
        if case .file(let settings) = self { settings } else { nil }
    }

    var posting: PostingSettings? {
        if case .post(let settings) = self { settings } else { nil }
    }
}
