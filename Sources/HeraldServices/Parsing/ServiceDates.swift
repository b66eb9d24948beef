import Foundation

/// Parses the date formats the services send, by hand so no formatter state is shared and
/// the result never depends on the user's locale (the POSIX / English month names only).
public enum ServiceDates {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Twitter's `EEE MMM dd HH:mm:ss Z yyyy`, e.g. `Wed Oct 10 20:19:24 +0000 2018`.
    public static func parseTwitter(_ text: String) -> Date? {
        let fields = text.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count == 6, let month = monthNumber(fields[1]), let day = Int(fields[2]),
            let time = clock(fields[3]), let offset = zoneOffset(fields[4]), let year = Int(fields[5])
        else { return nil }
        return date(year: year, month: month, day: day, time: time, offsetSeconds: offset)
    }

    /// BaaS ISO 8601 `yyyy-MM-dd'T'HH:mm:ss.SSS'Z'` (fraction and zone offset optional).
    public static func parseISO8601(_ text: String) -> Date? {
        let scalars = Array(text.utf8)
        guard scalars.count >= 19, scalars[4] == UInt8(ascii: "-"), scalars[7] == UInt8(ascii: "-"),
            scalars[10] == UInt8(ascii: "T") || scalars[10] == UInt8(ascii: " "),
            let year = Int(substring(scalars, 0, 4)), let month = Int(substring(scalars, 5, 7)),
            let day = Int(substring(scalars, 8, 10)), let time = clock(Substring(substring(scalars, 11, 19)))
        else { return nil }
        var index = 19
        var fraction = 0.0
        if index < scalars.count, scalars[index] == UInt8(ascii: ".") {
            var digits = ""
            index += 1
            while index < scalars.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(scalars[index]) {
                digits.append(Character(UnicodeScalar(scalars[index])))
                index += 1
            }
            guard !digits.isEmpty, let value = Double("0." + digits) else { return nil }
            fraction = value
        }
        let zone = substring(scalars, index, scalars.count)
        let offset: Int
        if zone == "Z" || zone.isEmpty {
            offset = 0
        } else if let parsed = zoneOffset(Substring(zone.replacingOccurrences(of: ":", with: ""))) {
            offset = parsed
        } else {
            return nil
        }
        return date(year: year, month: month, day: day, time: time, offsetSeconds: offset)?.addingTimeInterval(fraction)
    }

    /// An HTTP date, IMF-fixdate form: `Sun, 06 Nov 1994 08:49:37 GMT`.
    public static func parseHTTP(_ text: String) -> Date? {
        let fields = text.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count == 6, fields[5] == "GMT", let day = Int(fields[1]), let month = monthNumber(fields[2]),
            let year = Int(fields[3]), let time = clock(fields[4])
        else { return nil }
        return date(year: year, month: month, day: day, time: time, offsetSeconds: 0)
    }

    private static func substring(_ scalars: [UInt8], _ from: Int, _ to: Int) -> String {
        guard from <= to, to <= scalars.count else { return "" }
        return String(decoding: scalars[from..<to], as: UTF8.self)
    }

    private static func monthNumber(_ name: Substring) -> Int? {
        months.firstIndex(of: String(name)).map { $0 + 1 }
    }

    private static func clock(_ text: Substring) -> (Int, Int, Int)? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ $0.count == 2 }), let hour = Int(parts[0]),
            let minute = Int(parts[1]), let second = Int(parts[2]),
            (0..<24).contains(hour), (0..<60).contains(minute), (0...60).contains(second)
        else { return nil }
        return (hour, minute, second)
    }

    private static func zoneOffset(_ text: Substring) -> Int? {
        guard text.count == 5, let sign = text.first, sign == "+" || sign == "-",
            let hours = Int(text.dropFirst().prefix(2)), let minutes = Int(text.suffix(2))
        else { return nil }
        let seconds = hours * 3600 + minutes * 60
        return sign == "-" ? -seconds : seconds
    }

    /// Days from civil (proleptic Gregorian), so no Calendar is involved.
    static func date(year: Int, month: Int, day: Int, time: (Int, Int, Int), offsetSeconds: Int) -> Date? {
        guard (1...12).contains(month), (1...31).contains(day), (1...9999).contains(year) else { return nil }
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = days * 86_400 + time.0 * 3600 + time.1 * 60 + time.2 - offsetSeconds
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}

extension ServiceDates {
    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]

    /// Formats `date` in UTC as Twitter does: `Wed Oct 10 20:19:24 +0000 2018`.
    public static func formatTwitter(_ date: Date) -> String {
        let parts = utcParts(date)
        let month = months[parts.month - 1]
        return "\(weekdays[parts.weekday]) \(month) \(pad(parts.day)) \(pad(parts.hour)):\(pad(parts.minute)):\(pad(parts.second)) +0000 \(parts.year)"
    }

    /// Formats `date` in UTC as BaaS does: `2018-10-10T20:19:24.500Z`.
    public static func formatISO8601(_ date: Date) -> String {
        let parts = utcParts(date)
        let interval = date.timeIntervalSince1970
        let millis = interval.isFinite ? min(999, max(0, Int((interval - interval.rounded(.down)) * 1000))) : 0
        let millisText = String(repeating: "0", count: 3 - String(millis).count) + String(millis)
        return "\(parts.year)-\(pad(parts.month))-\(pad(parts.day))T\(pad(parts.hour)):\(pad(parts.minute)):\(pad(parts.second)).\(millisText)Z"
    }

    private static func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// Civil from days (the inverse of `date(year:…)`).
    private static func utcParts(_ date: Date) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, weekday: Int) {
        // Out-of-range dates (not produced by the parsers) format as the epoch instead of trapping.
        let interval = date.timeIntervalSince1970
        let total = interval.isFinite && abs(interval) < 1e14 ? Int(interval.rounded(.down)) : 0
        var days = total / 86_400
        var seconds = total % 86_400
        if seconds < 0 { seconds += 86_400; days -= 1 }
        let weekday = ((days % 7) + 7) % 7
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day, seconds / 3600, seconds % 3600 / 60, seconds % 60, weekday)
    }
}
