import Foundation
import HeraldRuntime

extension Commands {
    /// `herald status`: the running daemon's loaders and outbox, from its status endpoint.
    static func status(url: String?, config path: String) async -> Int32 {
        let base: URL
        do {
            if let url {
                base = try StatusQuery.baseURL(from: url)
            } else {
                guard let configuration = validConfiguration(path) else { return 2 }
                base = try StatusQuery.baseURL(for: configuration, path: path)
            }
            Terminal.outLines(String(try await StatusQuery.table(from: base).dropLast()))
            return 0
        } catch {
            Terminal.err("herald: \(error.description)")
            return error.isUsage ? 2 : 1
        }
    }
}
