/// The wire format of a timeline read.
public enum TimelineFormat: String, Sendable, Hashable, Codable {
    /// `.json`, decoded with Codable.
    case json
    /// `.xml`, parsed with the SAX-style parser.
    case xml
}
