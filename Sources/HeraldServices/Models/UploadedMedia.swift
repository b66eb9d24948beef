/// A media upload the service has accepted and processed: attach ``mediaID`` to a status.
public struct UploadedMedia: Sendable, Hashable {
    /// The media id as a string (`media_id_string`).
    public var mediaID: String
    /// The size the service counted.
    public var size: Int?
    /// Seconds until the id expires, when reported.
    public var expiresAfterSecs: Int?
    /// STATUS polls made while it processed.
    public var statusPolls: Int
}
