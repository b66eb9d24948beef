import Foundation

/// `/1.1/media/upload.json`: INIT, APPEND (multipart), FINALIZE and STATUS.
struct MediaUploadEndpoint {
    let emulator: TwitterEmulator

    private var configuration: SandboxConfiguration { emulator.configuration }

    func handle(_ request: SandboxRequest) -> SandboxResponse {
        var fields: [String: String] = [:]
        var media: Data?
        for (key, value) in request.queryItems + request.formItems { fields[key] = value }
        if let contentType = request.header("Content-Type"), let boundary = MultipartParser.boundary(of: contentType) {
            guard let parts = MultipartParser.parse(request.body, boundary: boundary) else {
                return .twitterError(400, code: 324, "Malformed multipart body.")
            }
            for part in parts {
                switch part.name {
                case "media": media = part.data
                case "media_data":
                    guard let decoded = Data(base64Encoded: String(decoding: part.data, as: UTF8.self),
                                             options: .ignoreUnknownCharacters) else {
                        return .twitterError(400, code: 324, "media_data is not base64.")
                    }
                    media = decoded
                default: fields[part.name] = String(decoding: part.data, as: UTF8.self)
                }
            }
        }
        switch (request.method, fields["command"]) {
        case ("POST", "INIT"): return initialize(fields)
        case ("POST", "APPEND"): return append(fields, media: media)
        case ("POST", "FINALIZE"): return finalize(fields)
        case ("GET", "STATUS"): return status(fields)
        default: return .twitterError(400, code: 38, "command parameter is missing or invalid.")
        }
    }

    private func initialize(_ fields: [String: String]) -> SandboxResponse {
        guard let total = fields["total_bytes"].flatMap({ Int($0) }), total > 0, let type = fields["media_type"] else {
            return .twitterError(400, code: 38, "total_bytes and media_type are required.")
        }
        guard total <= configuration.maxMediaBytes else {
            return .twitterError(400, code: 324, "File size exceeds \(configuration.maxMediaBytes) bytes.")
        }
        let id = emulator.state.withLock { state -> String in
            let id = String(state.nextMediaID)
            state.nextMediaID += 1
            state.uploads[id] = TwitterState.Upload(mediaType: type, category: fields["media_category"], totalBytes: total)
            return id
        }
        return .json(202, .object([("media_id", .uint(UInt64(id) ?? 0)), ("media_id_string", .string(id)), ("expires_after_secs", .int(3599))]))
    }

    private func append(_ fields: [String: String], media: Data?) -> SandboxResponse {
        guard let id = fields["media_id"], let index = fields["segment_index"].flatMap({ Int($0) }), (0...999).contains(index),
            let media
        else { return .twitterError(400, code: 38, "media_id, segment_index and media are required.") }
        guard media.count <= configuration.maxSegmentBytes else {
            return .twitterError(400, code: 324, "Segment exceeds \(configuration.maxSegmentBytes) bytes.")
        }
        return emulator.state.withLock { state -> SandboxResponse in
            guard var upload = state.uploads[id], !upload.finalized else {
                return .twitterError(400, code: 324, "Unknown or finalized media_id.")
            }
            upload.segments[index] = media.count
            state.uploads[id] = upload
            return SandboxResponse(status: 204)
        }
    }

    private func finalize(_ fields: [String: String]) -> SandboxResponse {
        guard let id = fields["media_id"] else { return .twitterError(400, code: 38, "media_id is required.") }
        let polls = configuration.processingPolls
        let fails = configuration.processingFails
        let checkAfter = configuration.processingCheckAfterSeconds
        return emulator.state.withLock { state -> SandboxResponse in
            guard var upload = state.uploads[id], !upload.finalized else {
                return .twitterError(400, code: 324, "Unknown or finalized media_id.")
            }
            let received = upload.segments.values.reduce(0, +)
            guard received == upload.totalBytes else {
                return .twitterError(400, code: 324, "Received \(received) of \(upload.totalBytes) bytes.")
            }
            upload.finalized = true
            upload.pollsLeft = upload.isVideo ? max(1, polls) : 0
            upload.failed = upload.isVideo && fails
            state.uploads[id] = upload
            var pairs: [(String, SandboxJSON)] = [
                ("media_id", .uint(UInt64(id) ?? 0)), ("media_id_string", .string(id)),
                ("size", .int(Int64(received))), ("expires_after_secs", .int(86_400)),
            ]
            if upload.isVideo {
                pairs.append(("video", .object([("video_type", .string(upload.mediaType))])))
                pairs.append(("processing_info", .object([("state", .string("pending")), ("check_after_secs", .int(Int64(checkAfter)))])))
            }
            return .json(201, .object(pairs))
        }
    }

    private func status(_ fields: [String: String]) -> SandboxResponse {
        guard let id = fields["media_id"] else { return .twitterError(400, code: 38, "media_id is required.") }
        let polls = max(1, configuration.processingPolls)
        let checkAfter = configuration.processingCheckAfterSeconds
        return emulator.state.withLock { state -> SandboxResponse in
            guard var upload = state.uploads[id], upload.finalized else {
                return .twitterError(400, code: 324, "Unknown media_id.")
            }
            if upload.pollsLeft > 0 { upload.pollsLeft -= 1 }
            state.uploads[id] = upload
            var info: [(String, SandboxJSON)]
            if upload.pollsLeft > 0 {
                let percent = 100 * (polls - upload.pollsLeft) / (polls + 1)
                info = [("state", .string("in_progress")), ("check_after_secs", .int(Int64(checkAfter))), ("progress_percent", .int(Int64(percent)))]
            } else if upload.failed {
                info = [("state", .string("failed")), ("progress_percent", .int(100)),
                        ("error", .object([("code", .int(1)), ("name", .string("InvalidMedia")), ("message", .string("Unsupported video format"))]))]
            } else {
                info = [("state", .string("succeeded")), ("progress_percent", .int(100))]
            }
            return .json(200, .object([("media_id", .uint(UInt64(id) ?? 0)), ("media_id_string", .string(id)), ("processing_info", .object(info))]))
        }
    }
}
