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

    /// A JSON document or JSON Lines line made safe to print, still the same JSON: control
    /// characters in strings as `\uXXXX` escapes, outside them as spaces (the console log's JSON
    /// format does the same).
    package static func json(_ text: String) -> String {
        LogLineFormatter.oneLineJSON(text)
    }
}
