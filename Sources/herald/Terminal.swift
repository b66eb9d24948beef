import Foundation
import HeraldRuntime

/// The only place Herald talks to the terminal.
///
/// Each call writes one line: any control character in it (a line break, an escape sequence
/// from a service's error or a status answer) is escaped (`TerminalText.line`), so the only
/// line breaks on the terminal are the ones written here. Herald's own multi-line texts go
/// through ``outLines(_:)``.
enum Terminal {
    static func out(_ line: String) {
        FileHandle.standardOutput.write(Data((TerminalText.line(line) + "\n").utf8))
    }

    static func err(_ line: String) {
        FileHandle.standardError.write(Data((TerminalText.line(line) + "\n").utf8))
    }

    /// `text`'s lines, each as ``out(_:)`` writes it; for text whose line breaks are Herald's
    /// (help, a status table made of escaped strings).
    static func outLines(_ text: String) {
        text.split(separator: "\n", omittingEmptySubsequences: false).forEach { out(String($0)) }
    }
}
