/// Durations as written in `config.json`: a whole number and a unit, `250ms`, `30s`, `5m`, `1h`.
public enum DurationText {
    /// Parses `250ms`, `30s`, `5m`, `1h` (also `0ms`); nil for anything else.
    public static func parse(_ text: String) -> Duration? {
        let units: [(String, Int64)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000)]
        for (suffix, milliseconds) in units where text.hasSuffix(suffix) {
            let number = text.dropLast(suffix.count)
            // "5ms" also ends in "s": the digits check rejects "5m" + "s".
            guard !number.isEmpty, number.count <= 9, number.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let value = Int64(number) else { continue }
            return .milliseconds(value * milliseconds)
        }
        return nil
    }

    /// The shortest exact spelling: `250ms`, `30s`, `5m`, `1h`.
    public static func format(_ duration: Duration) -> String {
        let milliseconds = duration.wholeMilliseconds
        if milliseconds != 0 && milliseconds % 3_600_000 == 0 { return "\(milliseconds / 3_600_000)h" }
        if milliseconds != 0 && milliseconds % 60_000 == 0 { return "\(milliseconds / 60_000)m" }
        if milliseconds % 1000 == 0 { return "\(milliseconds / 1000)s" }
        return "\(milliseconds)ms"
    }
}
