import Foundation

/// A ``StatusReport`` as text for a terminal: a summary line, the loaders as a table (state,
/// last run, result, next run, new items; times relative to the report's own), the outbox.
public enum StatusTable {
    /// The text, ending in a newline.
    public static func render(_ report: StatusReport, url: URL) -> String {
        var lines = ["herald at \(url.absoluteString): \(report.ready ? "ready" : "starting"), \(report.bus.published) events published, "
                     + "\(report.streams.clients) live \(report.streams.clients == 1 ? "client" : "clients")"]
        if let config = report.config {
            var line = "config \(config.path ?? "-")" + (config.sha1.map { " sha1 \($0.prefix(12))" } ?? "")
                + " loaded \(relative(config.loadedAt, to: report.time)), \(config.reloads) \(config.reloads == 1 ? "reload" : "reloads")"
            if !config.lastReloadSuccessful { line += "; the last failed: " + config.lastErrors.joined(separator: "; ") }
            lines.append(line)
        }
        var rows = [["LOADER", "KIND", "STATE", "LAST RUN", "RESULT", "NEXT RUN", "PULLS", "NEW"]]
        for loader in report.loaders {
            rows.append([
                loader.id, loader.kind, loader.state, relative(loader.lastRun, to: report.time),
                loader.lastResult.map { "\($0): \(loader.lastMessage ?? "")" } ?? "-",
                relative(loader.nextRun, to: report.time), "\(loader.pulls)", "\(loader.newItems)",
            ])
        }
        if report.loaders.isEmpty { rows.append(["(no loaders)", "", "", "", "", "", "", ""]) }
        lines += table(rows, numeric: [6, 7])
        for poster in report.posts {
            let sent = poster.sent.values.reduce(0, +), failed = poster.failed.values.reduce(0, +)
            lines.append("outbox \(poster.name): \(poster.pending.count) waiting, \(poster.held) held, \(sent) sent, \(failed) failed")
            for pending in poster.pending.prefix(10) {
                lines.append("  \(pending.rule)  \(pending.key)  made \(relative(pending.created, to: report.time))")
            }
            if poster.pending.count > 10 { lines.append("  … and \(poster.pending.count - 10) more") }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `12s ago`, `in 3m 5s`, `now`, or `-`.
    static func relative(_ date: Date?, to now: Date) -> String {
        guard let date else { return "-" }
        let seconds = Int(date.timeIntervalSince(now).rounded())
        if seconds == 0 { return "now" }
        let magnitude = abs(seconds)
        let text = magnitude < 60 ? "\(magnitude)s" : magnitude < 3600 ? "\(magnitude / 60)m \(magnitude % 60)s"
            : "\(magnitude / 3600)h \(magnitude % 3600 / 60)m"
        return seconds > 0 ? "in \(text)" : "\(text) ago"
    }

    /// Columns padded to their widest cell, two spaces apart; `numeric` columns right-aligned.
    static func table(_ rows: [[String]], numeric: Set<Int>) -> [String] {
        let widths = (0..<(rows.first?.count ?? 0)).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return numeric.contains(column) ? pad + cell : cell + pad
            }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
    }
}
