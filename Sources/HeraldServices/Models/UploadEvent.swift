/// One element of ``TwitterClient/uploadMediaEvents(_:mediaType:category:)``.
public enum UploadEvent: Sendable, Hashable {
    /// A step finished.
    case progress(UploadProgress)
    /// The media is ready; this is the last element.
    case completed(UploadedMedia)
}
