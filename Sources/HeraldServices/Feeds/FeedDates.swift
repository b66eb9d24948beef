import Foundation

/// The dates feeds carry, read by hand (no formatter, no locale): RFC 822 / RFC 2822 in RSS 2.0
/// (`Wed, 02 Oct 2002 13:00:00 GMT`), RFC 3339 in Atom and Dublin Core (`2002-10-02T10:00:00-05:00`).
///
/// RFC 822 is read leniently, as feeds write it: the weekday is optional, the month may be
/// spelled out and in any case, a two-digit year is 19xx from 50 on and 20xx below (RFC 2822
/// §4.3), seconds are optional, and the zone may be a numeric offset (`+0900`, `+09:00`), `UT`,
/// `UTC`, `GMT`, `Z`, a North American zone (`EST` … `PDT`), a few common others (`CET`, `CEST`,
/// `BST`, `JST`, `KST`, `AEST`, `IST` as India), a military letter (read as `-0000`, as RFC 2822
/// says, since RFC 822 had their signs backwards), or missing (UTC). Anything else gives nil.
public enum FeedDates {
    /// The date in `text`, RFC 3339 or RFC 822; nil when it is neither.
    public static func parse(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 100 else { return nil }
        if let first = trimmed.unicodeScalars.first, ("0"..."9").contains(first), trimmed.utf8.count >= 10,
           Array(trimmed.utf8)[4] == UInt8(ascii: "-") {
            return parseRFC3339(trimmed)
        }
        return parseRFC822(trimmed)
    }

    /// `2002-10-02T10:00:00-05:00`, `2002-10-02T15:00:00.05Z`, a lowercase `t` / `z`, or a date alone.
    public static func parseRFC3339(_ text: String) -> Date? {
        let upper = text.uppercased()
        if upper.utf8.count == 10 { return ServiceDates.parseISO8601(upper + "T00:00:00Z") }
        return ServiceDates.parseISO8601(upper)
    }

    /// `[Day,] DD Mon YYYY HH:MM[:SS] [zone]`.
    public static func parseRFC822(_ text: String) -> Date? {
        var fields = text.replacingOccurrences(of: ",", with: " ").split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        if let first = fields.first, first.first?.isLetter == true { fields.removeFirst() }
        guard fields.count >= 4, let day = Int(fields[0]), (1...31).contains(day), let month = month(fields[1]),
              var year = Int(fields[2]), fields[2].count == 2 || fields[2].count == 4 else { return nil }
        if fields[2].count == 2 { year += year >= 50 ? 1900 : 2000 }
        let clock = fields[3].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 2 || clock.count == 3, clock.allSatisfy({ (1...2).contains($0.count) && $0.allSatisfy(\.isASCII) }),
              let hour = Int(clock[0]), let minute = Int(clock[1]), (0..<24).contains(hour), (0..<60).contains(minute) else { return nil }
        let second = clock.count == 3 ? Int(clock[2]) : 0
        guard let second, (0...60).contains(second) else { return nil }
        let offset: Int?
        switch fields.count {
        case 4: offset = 0
        case 5: offset = zone(fields[4])
        default: return nil
        }
        guard let offset else { return nil }
        return ServiceDates.date(year: year, month: month, day: day, time: (hour, minute, second), offsetSeconds: offset)
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let fullMonths = ["january", "february", "march", "april", "may", "june", "july", "august", "september",
                                     "october", "november", "december"]

    private static func month(_ name: String) -> Int? {
        let lower = name.lowercased()
        if let index = months.firstIndex(of: lower) { return index + 1 }
        if let index = fullMonths.firstIndex(of: lower) { return index + 1 }
        if lower == "sept" { return 9 }
        return nil
    }

    /// Hours east of UTC of the named zones feeds are seen with.
    private static let namedZones: [String: Int] = [
        "UT": 0, "UTC": 0, "GMT": 0, "Z": 0,
        "EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7,
        "CET": 1, "CEST": 2, "BST": 1, "JST": 9, "KST": 9, "AEST": 10, "AEDT": 11,
    ]

    /// The zone's offset in seconds east of UTC; nil when it is not one.
    static func zone(_ text: String) -> Int? {
        let upper = text.uppercased()
        if upper == "IST" { return 5 * 3600 + 1800 }
        if let hours = namedZones[upper] { return hours * 3600 }
        if upper.count == 1, let letter = upper.unicodeScalars.first, ("A"..."Z").contains(letter), letter != "J" { return 0 }
        guard let sign = upper.first, sign == "+" || sign == "-" else { return nil }
        let digits = upper.dropFirst().replacingOccurrences(of: ":", with: "")
        guard digits.count == 4, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
              let hours = Int(digits.prefix(2)), let minutes = Int(digits.suffix(2)), hours < 24, minutes < 60 else { return nil }
        let seconds = hours * 3600 + minutes * 60
        return sign == "-" ? -seconds : seconds
    }
}
