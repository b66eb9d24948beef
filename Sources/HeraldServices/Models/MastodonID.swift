/// Ordering of Mastodon ids, as the API's guidelines say: a longer id is newer, then compare
/// lexically. (Mastodon's ids are numbers cast to strings; GoToSocial's ULIDs and Pleroma's
/// flake ids sort the same way.)
public enum MastodonID {
    /// Whether `candidate` is newer than `marker` (true when there is no marker).
    public static func isNewer(_ candidate: String, than marker: String?) -> Bool {
        guard let marker else { return true }
        let a = candidate.utf8.count, b = marker.utf8.count
        return a != b ? a > b : candidate > marker
    }
}
