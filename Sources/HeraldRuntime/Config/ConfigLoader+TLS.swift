import Foundation
import HeraldIO

extension ConfigLoader {
    /// The keys every service takes for `https`: `"caFile"` (a PEM file of private roots, trusted
    /// instead of the system's store) and `"insecure"` (true turns verification off).
    static let tlsKeys = ["caFile", "insecure"]

    /// The TLS settings of the services that have any, by name. A `caFile` is resolved against
    /// the config's directory and must be a readable file; `insecure` must be true or false; the
    /// two exclude each other, and both need an `https` URL.
    func readServicesTLS(_ value: ConfigJSON?, baseDirectory: URL, _ reader: ConfigReader) -> [String: TLSConfiguration] {
        guard case .object(let entries)? = value else { return [:] }
        var settings: [String: TLSConfiguration] = [:]
        for name in entries.keys.sorted() {
            guard case .object(let fields)? = entries[name], fields["caFile"] != nil || fields["insecure"] != nil else { continue }
            let path = "services.\(name)"
            var tls = TLSConfiguration()
            var valid = true
            switch fields["insecure"] {
            case nil: break
            case .bool(let flag)?: tls.insecure = flag
            case let other?:
                reader.report("\(path).insecure", "expected true or false, got \(reader.shown(other, at: "\(path).insecure"))")
                valid = false
            }
            if fields["caFile"] != nil, let caFile = reader.string(fields, "caFile", at: path) {
                let resolved = Self.resolve(caFile, against: baseDirectory).path
                var isDirectory: ObjCBool = false
                if !FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory) || isDirectory.boolValue {
                    reader.report("\(path).caFile", "no file at \(resolved)")
                    valid = false
                } else if !FileManager.default.isReadableFile(atPath: resolved) {
                    reader.report("\(path).caFile", "\(resolved) is not readable")
                    valid = false
                } else {
                    tls.caFile = resolved
                }
            } else if fields["caFile"] != nil {
                valid = false
            }
            if tls.insecure && fields["caFile"] != nil {
                reader.report("\(path).insecure", "cannot be true with a caFile: the caFile is for verifying, insecure turns verifying off")
                valid = false
            }
            if case .string(let url)? = fields["url"], !url.lowercased().hasPrefix("https://") {
                let key = fields["caFile"] != nil ? "caFile" : "insecure"
                reader.report("\(path).\(key)", "applies to https only, and the url is \(url == "sandbox" ? "the sandbox (plain http)" : url)")
                valid = false
            }
            if valid { settings[name] = tls }
        }
        return settings
    }
}
