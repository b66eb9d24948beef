import Foundation

extension MastodonEmulator {
    /// `POST /api/v1/statuses`, form-encoded or JSON. A repeated `Idempotency-Key` within
    /// ``SandboxMastodonSettings/idempotencyWindow`` answers the status made the first time.
    func postStatus(_ request: SandboxRequest, origin: String, now: Date) -> SandboxResponse {
        var fields: [String: String] = [:]
        var mediaIDs: [String] = []
        if request.header("Content-Type")?.lowercased().hasPrefix("application/json") == true {
            guard let parsed = try? JSONDecoder().decode(SandboxJSON.self, from: request.body), case .object(let pairs) = parsed else {
                return Self.error(422, "Validation failed: the body is not a JSON object")
            }
            for (key, value) in pairs {
                switch value {
                case .string(let text): fields[key] = text
                case .bool(let flag): fields[key] = flag ? "true" : "false"
                case .array(let items) where key == "media_ids":
                    mediaIDs = items.compactMap { if case .string(let id) = $0 { id } else if case .int(let id) = $0 { String(id) } else { nil } }
                default: break
                }
            }
        } else {
            for (key, value) in request.formItems {
                if key == "media_ids[]" || key == "media_ids" { mediaIDs.append(value) } else { fields[key] = value }
            }
        }
        let text = fields["status"] ?? ""
        let key = request.header("Idempotency-Key")
        let visibility = fields["visibility"].flatMap { $0.isEmpty ? nil : $0 } ?? "public"
        let settings = self.settings
        return state.withLock { state -> SandboxResponse in
            state.grow(now: now, start: start, initial: configuration.initialStatusCount, interval: configuration.statusInterval)
            state.keys = state.keys.filter { now.timeIntervalSince($0.value.at) < settings.idempotencyWindow }
            if let key, let earlier = state.keys[key], let made = state.statuses.first(where: { $0.id == earlier.statusID }) {
                return .json(200, MastodonEncoding.status(made, media: made.mediaIDs.compactMap { state.media[$0] }, origin: origin))
            }
            if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty && mediaIDs.isEmpty {
                return Self.error(422, "Validation failed: Text can't be blank")
            }
            if text.count > settings.characterLimit {
                return Self.error(422, "Validation failed: Text character limit of \(settings.characterLimit) exceeded")
            }
            guard ["public", "unlisted", "private", "direct"].contains(visibility) else {
                return Self.error(422, "Validation failed: Visibility is not included in the list")
            }
            guard mediaIDs.count <= 4 else { return Self.error(422, "Validation failed: Media attachments is too long (maximum is 4)") }
            for id in mediaIDs {
                guard let media = state.media[id], !media.attached else { return Self.error(422, "Validation failed: Media attachments are invalid") }
                guard media.processed else {
                    return Self.error(422, "Cannot attach files that have not finished processing. Try again in a moment!")
                }
            }
            for id in mediaIDs { state.media[id]?.attached = true }
            let stored = state.append(MastodonState.StoredStatus(
                id: 0, createdAt: now, text: text, author: MastodonFixtures.me, visibility: visibility,
                spoiler: fields["spoiler_text"] ?? "", language: fields["language"].flatMap { $0.isEmpty ? nil : $0 }, tags: [],
                emoji: false, link: false, mediaIDs: mediaIDs, inReplyTo: fields["in_reply_to_id"], posted: true, idempotencyKey: key))
            if let key { state.keys[key] = (stored.id, now) }
            return .json(200, MastodonEncoding.status(stored, media: mediaIDs.compactMap { state.media[$0] }, origin: origin))
        }
    }

    /// `POST /api/v2/media` (multipart `file`, `description`): an image is processed at once
    /// (200); video, gifv and audio answer 202 with no `url` until
    /// ``SandboxMastodonSettings/mediaPolls`` polls. `POST /api/v1/media` waits (always 200).
    func upload(_ request: SandboxRequest, origin: String, synchronous: Bool) -> SandboxResponse {
        guard let contentType = request.header("Content-Type"), let boundary = MultipartParser.boundary(of: contentType),
              let parts = MultipartParser.parse(request.body, boundary: boundary) else {
            return Self.error(422, "Validation failed: File content type is invalid, File is invalid")
        }
        guard let file = parts.first(where: { $0.name == "file" }), !file.data.isEmpty else {
            return Self.error(422, "Validation failed: File content type is invalid, File is invalid")
        }
        let mime = (file.contentType ?? "").lowercased().split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let type: String
        switch mime {
        case "image/gif": type = "gifv"
        case let image where image.hasPrefix("image/"): type = "image"
        case let video where video.hasPrefix("video/"): type = "video"
        case let audio where audio.hasPrefix("audio/"): type = "audio"
        default: return Self.error(422, "Validation failed: File content type is invalid, File is invalid")
        }
        let description = parts.first { $0.name == "description" }.map { String(decoding: $0.data, as: UTF8.self) }
        let immediate = synchronous || type == "image"
        let polls = immediate ? 0 : settings.mediaPolls.map { max(1, $0) }
        return state.withLock { state -> SandboxResponse in
            let id = String(state.nextMediaID)
            state.nextMediaID += 1
            let media = MastodonState.Media(id: id, type: type, mimeType: mime, size: file.data.count, description: description,
                                            pollsLeft: polls, data: file.data.count <= 16 * 1024 * 1024 ? file.data : nil)
            state.media[id] = media
            return .json(media.processed ? 200 : 202, MastodonEncoding.media(media, origin: origin))
        }
    }

    /// `GET /api/v1/media/:id`: 206 while processing (no `url`), 200 once processed.
    func poll(_ id: String, origin: String) -> SandboxResponse {
        state.withLock { state -> SandboxResponse in
            guard var media = state.media[id] else { return Self.error(404, "Record not found") }
            if let left = media.pollsLeft, left > 0 { media.pollsLeft = left - 1 }
            state.media[id] = media
            return .json(media.processed ? 200 : 206, MastodonEncoding.media(media, origin: origin))
        }
    }

    /// The processed file of an upload (`url` points here).
    func mediaFile(_ id: String) -> SandboxResponse {
        let found = state.withLock { state in state.media[id].flatMap { $0.processed ? $0 : nil } }
        guard let found, let data = found.data else { return Self.error(404, "Record not found") }
        return SandboxResponse(status: 200, headers: [("Content-Type", found.mimeType)], body: data)
    }
}
