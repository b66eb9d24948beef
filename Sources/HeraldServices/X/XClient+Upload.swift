import Foundation

extension XClient {
    /// Uploads media with the v2 chunked flow: `POST /2/media/upload/initialize` (JSON),
    /// `POST /2/media/upload/{id}/append` per segment (multipart `segment_index` and `media`),
    /// `POST /2/media/upload/{id}/finalize`, then `GET /2/media/upload?command=STATUS&media_id=`
    /// while `processing_info.state` is `pending` or `in_progress`, waiting `check_after_secs`
    /// on ``clock`` between polls. Each step starts only when the previous one succeeded.
    ///
    /// - Returns: the media id to pass to ``createPost(text:mediaIDs:inReplyTo:)``.
    /// - Throws: `.invalidRequest` for empty data or data outside ``mediaLimits`` (an MP4 is
    ///   parsed and checked before anything is sent), a segment size outside 1 byte…5 MB or
    ///   more than 1000 segments; `.processingFailed` when processing fails or is still not
    ///   done after ``maxStatusPolls`` polls; and any error of the steps.
    public func uploadMedia(
        _ data: Data, mediaType: String, category: String? = nil,
        progress: @Sendable (UploadProgress) -> Void = { _ in }
    ) async throws -> UploadedMedia {
        _ = try ChunkedUploadPlan.segments(for: data, mediaType: mediaType, limits: mediaLimits, segmentSize: segmentSize)

        var initialize: [String: Any] = ["media_type": mediaType, "total_bytes": data.count]
        if let category { initialize["media_category"] = category }
        let initBody = try JSONSerialization.data(withJSONObject: initialize, options: [.sortedKeys, .withoutEscapingSlashes])
        let initialized = try XResponse.decode(XDataBody<XMediaUpload>.self, from: try await send(
            "POST", try URLBuilder.url(uploadBaseURL, path: "/2/media/upload/initialize"), body: initBody, contentType: "application/json")).data
        let mediaID = try Self.pathID(initialized.id)
        var report = UploadProgress(phase: .initialized, mediaID: mediaID, bytesSent: 0, totalBytes: data.count)
        progress(report)

        let appendURL = try URLBuilder.url(uploadBaseURL, path: "/2/media/upload/\(mediaID)/append")
        var offset = 0
        var index = 0
        while offset < data.count {
            if Task.isCancelled { throw ServiceError.cancelled }
            let end = min(data.count, offset + segmentSize)
            let multipart = MultipartBody(fields: [("segment_index", String(index))], fileField: "media", fileData: data[offset..<end])
            _ = try await send("POST", appendURL, body: multipart.data, contentType: multipart.contentType)
            offset = end
            index += 1
            report.phase = .uploading
            report.bytesSent = offset
            progress(report)
        }

        let finalized = try XResponse.decode(XDataBody<XMediaUpload>.self, from: try await send(
            "POST", try URLBuilder.url(uploadBaseURL, path: "/2/media/upload/\(mediaID)/finalize"))).data
        var info = finalized.processingInfo
        var polls = 0
        while let current = info, current.state == .pending || current.state == .inProgress {
            guard polls < maxStatusPolls else {
                throw ServiceError(kind: .processingFailed, message: "media \(mediaID) still processing after \(polls) status polls; given up")
            }
            report.phase = .processing
            report.processingPercent = current.progressPercent
            progress(report)
            // Bounded whatever the service says: a negative or huge check_after_secs cannot stall us.
            let wait = max(0, min(current.checkAfterSecs ?? 1, 600))
            do {
                try await clock.sleep(for: .seconds(wait))
            } catch {
                throw ServiceError.cancelled
            }
            let statusURL = try URLBuilder.url(uploadBaseURL, path: "/2/media/upload", query: [("command", "STATUS"), ("media_id", mediaID)])
            let status = try XResponse.decode(XDataBody<XMediaUpload>.self, from: try await send("GET", statusURL)).data
            polls += 1
            info = status.processingInfo
        }
        if let info, info.state == .failed {
            let details = info.error.map { [APIErrorDetail(code: $0.code ?? 0, message: $0.message ?? $0.name ?? "")] } ?? []
            throw ServiceError(kind: .processingFailed, message: info.error?.message ?? "media processing failed", apiErrors: details)
        }
        report.phase = .completed
        report.processingPercent = info.map { _ in 100 }
        progress(report)
        return UploadedMedia(mediaID: mediaID, size: finalized.size, expiresAfterSecs: finalized.expiresAfterSecs, statusPolls: polls)
    }
}

/// `data` of the v2 upload's initialize, finalize and status answers.
struct XMediaUpload: Sendable, Decodable {
    var id: String
    var size: Int?
    var expiresAfterSecs: Int?
    var processingInfo: MediaProcessingInfo?

    enum CodingKeys: String, CodingKey {
        case id, mediaID = "media_id", size, expiresAfterSecs = "expires_after_secs", processingInfo = "processing_info"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // The status answer names the id `media_id`; the others `id`.
        id = container.contains(.id) ? try container.decodeXIdentifier(.id) : try container.decodeXIdentifier(.mediaID)
        size = try container.decodeIfPresent(Int.self, forKey: .size)
        expiresAfterSecs = try container.decodeIfPresent(Int.self, forKey: .expiresAfterSecs)
        processingInfo = try container.decodeIfPresent(MediaProcessingInfo.self, forKey: .processingInfo)
    }
}
