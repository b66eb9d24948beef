import Foundation
import HeraldIO

extension ConfigLoader {
    /// The keys every service, and a feed loader, takes for `https`: `"caFile"` (a PEM file of
    /// private roots, trusted instead of the system's store) and `"insecure"` (true turns
    /// verification off).
    static let tlsKeys = ["caFile", "insecure"]

    /// The TLS settings of the services that have any, by name. A `caFile` is resolved against
    /// the config's directory and must be a readable file; `insecure` must be true or false; the
    /// two exclude each other, and both need an `https` URL.
    func readServicesTLS(_ value: ConfigJSON?, baseDirectory: URL, _ reader: ConfigReader) -> [String: TLSConfiguration] {
        guard case .object(let entries)? = value else { return [:] }
        var settings: [String: TLSConfiguration] = [:]
        for name in entries.keys.sorted() {
            guard case .object(let fields)? = entries[name] else { continue }
            if let tls = readTLS(fields, at: "services.\(name)", baseDirectory: baseDirectory, reader) { settings[name] = tls }
        }
        return settings
    }

    /// The `caFile` / `insecure` of one object at `path` (a service, or a feed loader), or nil when
    /// it has neither or they are invalid (reported). The object's string `url` (a URL,
    /// `"sandbox"` or `"sandbox:/path"`) must be https for either to apply.
    func readTLS(_ fields: [String: ConfigJSON], at path: String, baseDirectory: URL, _ reader: ConfigReader) -> TLSConfiguration? {
        guard fields["caFile"] != nil || fields["insecure"] != nil else { return nil }
        var tls = TLSConfiguration()
        var valid = true
        switch fields["insecure"] {
        case nil: break
        case .bool(let flag)?: tls.insecure = flag
        case let other?:
            reader.report("\(path).insecure", "expected true or false, got \(reader.shown(other, at: "\(path).insecure"))")
            valid = false
        }
        if fields["caFile"] != nil {
            tls.caFile = readableFile(fields, "caFile", at: path, baseDirectory: baseDirectory, reader)
            valid = valid && tls.caFile != nil
        }
        if tls.insecure && fields["caFile"] != nil {
            reader.report("\(path).insecure", "cannot be true with a caFile: the caFile is for verifying, insecure turns verifying off")
            valid = false
        }
        if case .string(let url)? = fields["url"], !url.lowercased().hasPrefix("https://") {
            let key = fields["caFile"] != nil ? "caFile" : "insecure"
            let shown = url == "sandbox" || url.hasPrefix("sandbox:") ? "the sandbox (plain http)" : url
            reader.report("\(path).\(key)", "applies to https only, and the url is \(shown)")
            valid = false
        }
        return valid ? tls : nil
    }

    /// The file named by `key` (resolved against the config's directory), or nil after reporting
    /// that there is no such file or it cannot be read.
    func readableFile(_ fields: [String: ConfigJSON], _ key: String, at path: String, baseDirectory: URL, _ reader: ConfigReader) -> String? {
        guard let name = reader.string(fields, key, at: path) else { return nil }
        let resolved = Self.resolve(name, against: baseDirectory).path
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory) || isDirectory.boolValue {
            reader.report("\(path).\(key)", "no file at \(resolved)")
            return nil
        }
        guard FileManager.default.isReadableFile(atPath: resolved) else {
            reader.report("\(path).\(key)", "\(resolved) is not readable")
            return nil
        }
        return resolved
    }

    /// `cluster.tls`: TLS to every NATS server, verified against `caFile` (else the system's
    /// roots), with `certificateFile` and `keyFile` for servers that verify clients (both or
    /// neither). There is no way to turn verification off.
    func readClusterTLS(_ value: ConfigJSON, baseDirectory: URL, _ reader: ConfigReader) -> TLSConfiguration? {
        let path = "cluster.tls"
        guard let fields = reader.object(value, at: path, allowed: ["caFile", "certificateFile", "keyFile"]) else { return nil }
        var tls = TLSConfiguration()
        var valid = true
        for key in ["caFile", "certificateFile", "keyFile"] where fields[key] != nil {
            let file = readableFile(fields, key, at: path, baseDirectory: baseDirectory, reader)
            valid = valid && file != nil
            switch key {
            case "caFile": tls.caFile = file
            case "certificateFile": tls.certificateFile = file
            default: tls.privateKeyFile = file
            }
        }
        if (fields["certificateFile"] == nil) != (fields["keyFile"] == nil) {
            reader.report("\(path).\(fields["keyFile"] == nil ? "keyFile" : "certificateFile")", "required with \(fields["keyFile"] == nil ? "certificateFile" : "keyFile"): a client certificate needs its key")
            valid = false
        }
        return valid ? tls : nil
    }
}
