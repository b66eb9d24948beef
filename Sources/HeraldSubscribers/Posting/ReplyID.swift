/// The id a post replies to, as a rule rendered it, checked before anything is uploaded or
/// sent: a reply to an id the service cannot have would be refused (or, worse, posted as a
/// post that answers nothing), whatever the retries.
enum ReplyID {
    /// An X (or Twitter v1.1) post id: decimal digits, at most 19 of them (a 64-bit number).
    static func x(_ id: String?) throws(PostServiceError) -> String? {
        guard let id else { return nil }
        guard !id.isEmpty, id.utf8.count <= 19, id.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw PostServiceError("inReplyTo rendered \(shown(id)), which is not a post id (decimal digits)")
        }
        return id
    }

    /// A Mastodon status id: the server's own string (numbers on Mastodon, ULIDs on
    /// GoToSocial), so only non-empty and without spaces.
    static func mastodon(_ id: String?) throws(PostServiceError) -> String? {
        guard let id else { return nil }
        guard !id.isEmpty, !id.contains(where: { $0.isWhitespace }), id.utf8.count <= 64 else {
            throw PostServiceError("inReplyTo rendered \(shown(id)), which is not a status id")
        }
        return id
    }

    private static func shown(_ id: String) -> String {
        id.isEmpty ? "an empty text" : "\"\(id.count <= 40 ? id : String(id.prefix(40)) + "…")\""
    }
}
