/// The answer to INIT, FINALIZE and STATUS of the chunked media upload.
struct MediaUploadResponse: Sendable, Decodable {
    var mediaIDString: String
    var size: Int?
    var expiresAfterSecs: Int?
    var processingInfo: MediaProcessingInfo?

    enum CodingKeys: String, CodingKey {
        case mediaIDString = "media_id_string", size, expiresAfterSecs = "expires_after_secs", processingInfo = "processing_info"
    }
}
