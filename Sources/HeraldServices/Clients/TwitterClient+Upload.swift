import Foundation

extension TwitterClient {
    /// Uploads media with the chunked flow: INIT, APPEND per segment (multipart), FINALIZE,
    /// then STATUS polls while the service processes it, waiting `check_after_secs` on
    /// ``clock`` between polls. Each step starts only when the previous one succeeded.
    ///
    /// - Parameters:
    ///   - data: the file's bytes.
    ///   - mediaType: e.g. `video/mp4`.
    ///   - category: e.g. `tweet_video` (asynchronous processing).
    ///   - progress: called after INIT, after each segment, after each STATUS poll and at the end.
    ///     Use ``uploadMediaEvents(_:mediaType:category:)`` for the same as an AsyncSequence.
    /// - Returns: the media id to pass to ``update(status:inReplyTo:mediaIDs:)``.
    /// - Throws: `.invalidRequest` for empty data, data outside ``mediaLimits`` (a `video/mp4` is
    ///   parsed and its duration, dimensions, aspect ratio and frame rate checked before INIT;
    ///   see ``MediaLimits/validate(video:mediaType:)``), a segment size outside 1 byte…5 MB,
    ///   or more than ``maxSegmentCount`` segments,
    ///   `.processingFailed` when processing fails or does not finish within
    ///   ``maxStatusPolls``, and any error of the steps.
    public func uploadMedia(
        _ data: Data, mediaType: String, category: String? = nil,
        progress: @Sendable (UploadProgress) -> Void = { _ in }
    ) async throws -> UploadedMedia {
        _ = try ChunkedUploadPlan.segments(for: data, mediaType: mediaType, limits: mediaLimits, segmentSize: segmentSize)
        let url = try URLBuilder.url(uploadBaseURL, path: "/1.1/media/upload.json")

        var initForm = [("command", "INIT"), ("total_bytes", String(data.count)), ("media_type", mediaType)]
        if let category { initForm.append(("media_category", category)) }
        let initialized = try JSONBodyDecoder.decode(MediaUploadResponse.self, from: try await send(method: "POST", url: url, form: initForm))
        let mediaID = initialized.mediaIDString
        var report = UploadProgress(phase: .initialized, mediaID: mediaID, bytesSent: 0, totalBytes: data.count)
        progress(report)

        var offset = 0
        var index = 0
        while offset < data.count {
            // A ServiceError, not CancellationError: the client throws only ServiceError.
            if Task.isCancelled { throw ServiceError.cancelled }
            let end = min(data.count, offset + segmentSize)
            let multipart = MultipartBody(fields: [
                ("command", "APPEND"), ("media_id", mediaID), ("segment_index", String(index)),
            ], fileField: "media", fileData: data[offset..<end])
            _ = try await send(method: "POST", url: url, body: multipart.data, contentType: multipart.contentType)
            offset = end
            index += 1
            report.phase = .uploading
            report.bytesSent = offset
            progress(report)
        }

        let finalized = try JSONBodyDecoder.decode(
            MediaUploadResponse.self,
            from: try await send(method: "POST", url: url, form: [("command", "FINALIZE"), ("media_id", mediaID)]))
        var info = finalized.processingInfo
        var polls = 0
        while let current = info, current.state == .pending || current.state == .inProgress {
            guard polls < maxStatusPolls else {
                throw ServiceError(kind: .processingFailed, message: "media \(mediaID) still processing after \(polls) polls")
            }
            report.phase = .processing
            report.processingPercent = current.progressPercent
            progress(report)
            let wait = max(0, min(current.checkAfterSecs ?? 1, 600))
            do {
                try await clock.sleep(for: .seconds(wait))
            } catch {
                throw ServiceError.cancelled
            }
            let statusURL = try URLBuilder.url(uploadBaseURL, path: "/1.1/media/upload.json", query: [("command", "STATUS"), ("media_id", mediaID)])
            let status = try JSONBodyDecoder.decode(MediaUploadResponse.self, from: try await send(method: "GET", url: statusURL))
            polls += 1
            info = status.processingInfo
        }
        if let info, info.state == .failed {
            let details = info.error.map { [APIErrorDetail(code: $0.code ?? 0, message: $0.message ?? $0.name ?? "")] } ?? []
            throw ServiceError(
                kind: .processingFailed, message: info.error?.message ?? "media processing failed", apiErrors: details)
        }
        report.phase = .completed
        report.processingPercent = info.map { _ in 100 }
        progress(report)
        return UploadedMedia(mediaID: mediaID, size: finalized.size, expiresAfterSecs: finalized.expiresAfterSecs, statusPolls: polls)
    }

    /// The chunked upload as an AsyncSequence: a ``UploadEvent/progress(_:)`` per step, then
    /// ``UploadEvent/completed(_:)``; a failure ends the sequence by throwing it. Ending the
    /// iteration early cancels the upload.
    public func uploadMediaEvents(_ data: Data, mediaType: String, category: String? = nil) -> AsyncThrowingStream<UploadEvent, Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    let media = try await uploadMedia(data, mediaType: mediaType, category: category) {
                        continuation.yield(.progress($0))
                    }
                    continuation.yield(.completed(media))
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
