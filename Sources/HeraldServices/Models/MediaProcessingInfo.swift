/// Where asynchronous media processing stands (`processing_info`).
public struct MediaProcessingInfo: Sendable, Hashable, Decodable {
    /// The processing state.
    public enum State: String, Sendable, Hashable, Decodable {
        /// Queued; ask again after `check_after_secs`.
        case pending
        /// Running; `progress_percent` tells how far.
        case inProgress = "in_progress"
        /// Ready to attach to a status.
        case succeeded
        /// Gave up; `error` tells why.
        case failed
    }

    /// The service's processing error.
    public struct ProcessingError: Sendable, Hashable, Decodable {
        /// The error code.
        public var code: Int?
        /// The error name, e.g. `InvalidMedia`.
        public var name: String?
        /// The message.
        public var message: String?
    }

    /// The state.
    public var state: State
    /// Seconds to wait before asking again.
    public var checkAfterSecs: Int?
    /// Percent done, when reported.
    public var progressPercent: Int?
    /// Why it failed, when it did.
    public var error: ProcessingError?

    enum CodingKeys: String, CodingKey {
        case state, checkAfterSecs = "check_after_secs", progressPercent = "progress_percent", error
    }
}
