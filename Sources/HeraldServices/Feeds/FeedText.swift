/// Text of feed fields as plain text: HTML dropped where the format says it may be HTML,
/// white space collapsed, bounded.
enum FeedText {
    /// `text` as plain text: through ``MastodonHTML/plainText(_:)`` when it may be HTML (RSS
    /// titles and descriptions, Atom `type="html"` / `"xhtml"`), white space collapsed, at most
    /// ``FeedItem/summaryLimit`` characters.
    static func plain(_ text: String, html: Bool) -> String {
        let plain = html ? MastodonHTML.plainText(text) : text
        let collapsed = collapse(plain)
        guard collapsed.count > FeedItem.summaryLimit else { return collapsed }
        return String(collapsed.prefix(FeedItem.summaryLimit - 1)) + "…"
    }

    /// Runs of white space as one space, none at the ends.
    static func collapse(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}
