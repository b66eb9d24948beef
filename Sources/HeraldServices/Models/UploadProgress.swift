/// Progress of a chunked media upload, reported after each step.
public struct UploadProgress: Sendable, Hashable {
    /// The step the upload is in.
    public enum Phase: String, Sendable, Hashable {
        /// INIT answered; nothing sent yet.
        case initialized
        /// Segments are being sent.
        case uploading
        /// FINALIZE answered; the service is processing.
        case processing
        /// Ready to attach to a status.
        case completed
    }

    /// The step.
    public var phase: Phase
    /// The media id (after INIT).
    public var mediaID: String
    /// Bytes sent so far.
    public var bytesSent: Int
    /// Bytes in total.
    public var totalBytes: Int
    /// The service's processing percentage, while processing.
    public var processingPercent: Int?
}
