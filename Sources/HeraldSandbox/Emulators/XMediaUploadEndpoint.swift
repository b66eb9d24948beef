import Foundation

/// The v2 chunked upload: `POST /2/media/upload/initialize`, `POST /2/media/upload/{id}/append`,
/// `POST /2/media/upload/{id}/finalize` and `GET /2/media/upload?command=STATUS&media_id=`,
/// over the same uploads as the v1.1 endpoint (processing goes `pending` → `in_progress` →
/// `succeeded` or `failed` over ``SandboxConfiguration/processingPolls`` polls).
struct XMediaUploadEndpoint {
    let emulator: TwitterEmulator

    private var configuration: SandboxConfiguration { emulator.configuration }

    func handle(_ request: SandboxRequest, parts: [String]) -> SandboxResponse {
        switch (request.method, parts.count) {
        case ("POST", 5) where parts[4] == "initialize": return initialize(request)
        case ("POST", 6) where parts[5] == "append": return append(request, id: parts[4])
        case ("POST", 6) where parts[5] == "finalize": return finalize(id: parts[4])
        case ("GET", 4):
            guard request.query("command") == "STATUS", let id = request.query("media_id") else {
                return XEncoding.invalidRequest("command must be STATUS and media_id is required", parameter: "command",
                                                value: request.query("command") ?? "")
            }
            return status(id: id)
        default:
            return XEncoding.problem(404, title: "Not Found", detail: "Sorry, that page does not exist.")
        }
    }

    private static func invalid(_ detail: String) -> SandboxResponse {
        XEncoding.problem(400, title: "Invalid Request", detail: detail, type: "https://api.twitter.com/2/problems/invalid-request")
    }

    private func initialize(_ request: SandboxRequest) -> SandboxResponse {
        guard let body = SandboxJSON.parse(request.body), case .object = body else {
            return Self.invalid("The request body must be a JSON object with media_type and total_bytes.")
        }
        let total: Int? = switch body["total_bytes"] {
        case .int(let value)?: Int(exactly: value)
        case .string(let text)?: Int(text)
        default: nil
        }
        guard let total, total > 0, let type = body["media_type"]?.string else {
            return Self.invalid("total_bytes and media_type are required.")
        }
        guard total <= configuration.maxMediaBytes else { return Self.invalid("File size exceeds \(configuration.maxMediaBytes) bytes.") }
        let id = emulator.state.withLock { state -> String in
            let id = String(state.nextMediaID)
            state.nextMediaID += 1
            state.uploads[id] = TwitterState.Upload(mediaType: type, category: body["media_category"]?.string, totalBytes: total)
            return id
        }
        return .json(200, .object([("data", .object([
            ("id", .string(id)), ("media_key", .string("7_" + id)), ("expires_after_secs", .int(86_400)),
        ]))]))
    }

    private func append(_ request: SandboxRequest, id: String) -> SandboxResponse {
        var index: Int?
        var media: Data?
        if let contentType = request.header("Content-Type"), let boundary = MultipartParser.boundary(of: contentType) {
            guard let parts = MultipartParser.parse(request.body, boundary: boundary) else { return Self.invalid("Malformed multipart body.") }
            for part in parts {
                switch part.name {
                case "media": media = part.data
                case "segment_index": index = Int(String(decoding: part.data, as: UTF8.self))
                default: break
                }
            }
        } else if let body = SandboxJSON.parse(request.body) {
            // The JSON form: `media` base64, `segment_index` a number.
            if case .int(let value)? = body["segment_index"] { index = Int(exactly: value) }
            media = body["media"]?.string.flatMap { Data(base64Encoded: $0, options: .ignoreUnknownCharacters) }
        }
        guard let index, (0...999).contains(index), let media else {
            return Self.invalid("segment_index (0…999) and media are required.")
        }
        guard media.count <= configuration.maxSegmentBytes else { return Self.invalid("Segment exceeds \(configuration.maxSegmentBytes) bytes.") }
        let expires = Int(configuration.now().addingTimeInterval(86_400).timeIntervalSince1970)
        return emulator.state.withLock { state -> SandboxResponse in
            guard var upload = state.uploads[id], !upload.finalized else { return Self.invalid("Unknown or finalized media id.") }
            upload.segments[index] = media.count
            state.uploads[id] = upload
            return .json(200, .object([("data", .object([("expires_at", .int(Int64(expires)))]))]))
        }
    }

    private func finalize(id: String) -> SandboxResponse {
        let polls = configuration.processingPolls
        let fails = configuration.processingFails
        let checkAfter = configuration.processingCheckAfterSeconds
        return emulator.state.withLock { state -> SandboxResponse in
            guard var upload = state.uploads[id], !upload.finalized else { return Self.invalid("Unknown or finalized media id.") }
            let received = upload.segments.values.reduce(0, +)
            guard received == upload.totalBytes else { return Self.invalid("Received \(received) of \(upload.totalBytes) bytes.") }
            upload.finalized = true
            upload.pollsLeft = upload.isVideo ? max(1, polls) : 0
            upload.failed = upload.isVideo && fails
            state.uploads[id] = upload
            var data: [(String, SandboxJSON)] = [
                ("id", .string(id)), ("media_key", .string("7_" + id)), ("size", .int(Int64(received))), ("expires_after_secs", .int(86_400)),
            ]
            if upload.isVideo {
                data.append(("processing_info", .object([("state", .string("pending")), ("check_after_secs", .int(Int64(checkAfter)))])))
            }
            return .json(200, .object([("data", .object(data))]))
        }
    }

    private func status(id: String) -> SandboxResponse {
        let polls = max(1, configuration.processingPolls)
        let checkAfter = configuration.processingCheckAfterSeconds
        return emulator.state.withLock { state -> SandboxResponse in
            guard var upload = state.uploads[id], upload.finalized else { return Self.invalid("Unknown media id.") }
            if upload.pollsLeft > 0 { upload.pollsLeft -= 1 }
            state.uploads[id] = upload
            let info: [(String, SandboxJSON)]
            if upload.pollsLeft > 0 {
                let percent = polls > 1_000_000 ? 1 : 100 * (polls - upload.pollsLeft) / (polls + 1)
                info = [("state", .string("in_progress")), ("check_after_secs", .int(Int64(checkAfter))), ("progress_percent", .int(Int64(percent)))]
            } else if upload.failed {
                info = [("state", .string("failed")), ("progress_percent", .int(100)),
                        ("error", .object([("code", .int(1)), ("name", .string("InvalidMedia")), ("message", .string("Unsupported video format"))]))]
            } else {
                info = [("state", .string("succeeded")), ("progress_percent", .int(100))]
            }
            return .json(200, .object([("data", .object([
                ("id", .string(id)), ("media_key", .string("7_" + id)), ("processing_info", .object(info)),
            ]))]))
        }
    }
}
