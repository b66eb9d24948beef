import HeraldSubscribers

/// Text from outside (a service's or server's error, a status answer, an archived event) made
/// safe to print: `herald` passes every line it writes through ``line(_:)``.
///
/// One escaper for the console log and the command line: the log's. Control characters (C0,
/// DEL, C1, U+2028 and U+2029; line breaks included) are written as escapes (`\n`, `\r`,
/// `\u{1b}`), so no text can clear the screen, retitle the window or start a forged line.
package enum TerminalText {
    /// `text` as one line, every control character in it escaped.
    package static func line(_ text: String) -> String {
        LogLineFormatter.oneLine(text)
    }

    /// Whether `scalar` is one of the characters ``line(_:)`` escapes.
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        LogLineFormatter.isControl(scalar)
    }

    /// A JSON document (or JSON Lines line) with every control character written so a terminal
    /// shows it and a JSON reader reads the same value: inside a string as a `\uXXXX` escape,
    /// outside one (where only insignificant white space can be) as a space.
    ///
    /// For valid JSON; anything else is escaped too, and stays invalid.
    package static func json(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = String.UnicodeScalarView()
        var inString = false, escaping = false
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                if inString {
                    let hex = String(scalar.value, radix: 16)
                    result.append(contentsOf: ("\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex).unicodeScalars)
                } else {
                    result.append(" ")
                }
                escaping = false
                continue
            }
            result.append(scalar)
            if escaping {
                escaping = false
            } else if scalar == "\\" && inString {
                escaping = true
            } else if scalar == "\"" {
                inString.toggle()
            }
        }
        return String(result)
    }
}
