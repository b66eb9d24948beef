import Foundation
import HeraldLoaders
import HeraldServices
import HeraldSubscribers

/// The `feed` loader, the `webhook` service and webhook post rules of `config.json`.
extension ConfigLoader {
    /// A feed loader's own keys (with `caFile` and `insecure` for an https feed).
    static let feedLoaderKeys = ["url", "timeout", "maxBytes"] + tlsKeys
    /// The fields of a feed loader's `finished` event and of its new items.
    static let feedEventFields: (event: Set<String>, item: Set<String>?) = (
        ["loader", "url", "format", "title", "itemCount", "newItems", "notModified", "movedTo", "duplicateItems", "itemsWithoutID"],
        ["id", "title", "link", "published", "author", "categories", "enclosures", "summary"])
    /// The header fields a webhook service may not set: the signature's, and those the
    /// connection sets itself.
    static let reservedWebhookHeaders: Set<String> = [
        "webhook-id", "webhook-timestamp", "webhook-signature", "content-type", "content-length", "host", "connection",
        "transfer-encoding",
    ]

    /// `"url"`: an http(s) URL or `"sandbox:/path"`; `"timeout"`; `"maxBytes"` (1 KiB … 64 MiB);
    /// `"caFile"` / `"insecure"` for an https feed, as a service's.
    func readFeedLoader(_ fields: [String: ConfigJSON], at path: String, baseDirectory: URL, _ reader: ConfigReader) -> FeedSettings? {
        let hasTLS = fields["caFile"] != nil || fields["insecure"] != nil
        let tls = readTLS(fields, at: path, baseDirectory: baseDirectory, reader)
        if hasTLS, tls == nil { return nil }
        let timeout = reader.duration(fields, "timeout", at: path, positive: true)
        let maxBytes = reader.integer(fields, "maxBytes", at: path, in: 1024...(64 * 1024 * 1024))
        if fields["maxBytes"] != nil, maxBytes == nil { return nil }
        guard let text = reader.string(fields, "url", at: path, required: true) else { return nil }
        let location: FeedSettings.Location
        if text.hasPrefix("sandbox:") {
            let feedPath = String(text.dropFirst("sandbox:".count))
            guard feedPath.hasPrefix("/"), !feedPath.contains(where: { $0.isWhitespace }) else {
                reader.report("\(path).url", "\"\(text)\" is not a sandbox feed; write \"sandbox:/feeds/news.rss\" (a path after \"sandbox:\")")
                return nil
            }
            location = .sandbox(path: feedPath)
        } else {
            guard case .url(let url)? = reader.endpoint(fields, "url", at: path, required: true) else {
                return nil
            }
            location = .url(url)
        }
        return FeedSettings(location: location, timeout: timeout, maxBytes: maxBytes ?? FeedClient.defaultMaxBytes, tls: tls)
    }

    /// `{"kind": "webhook", "url": URL | "sandbox" | {"env": …}, "secret": "whsec_…" | {"env": …},
    /// "headers": {name: value | {"env": …}}, "timeout": duration, "caFile": path, "insecure": bool}`
    /// (the TLS keys are read with every service's, by ``readServicesTLS(_:baseDirectory:_:)``).
    func readWebhookService(_ value: ConfigJSON, at path: String, _ reader: ConfigReader) -> ServiceConfiguration? {
        let allowed = ["kind", "url", "secret", "headers", "timeout"] + Self.tlsKeys
        guard let fields = reader.object(value, at: path, allowed: allowed) else { return nil }
        var valid = true
        var endpoint: Endpoint?
        switch fields["url"] {
        case .object?:
            // A URL that is itself a credential (Slack's and Discord's are): read like a secret.
            if let text = reader.secret(fields, "url", at: path) {
                if let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false {
                    endpoint = .url(url)
                } else {
                    reader.report("\(path).url", "the value read from the environment is not an http(s) URL")
                }
            }
        default:
            endpoint = reader.endpoint(fields, "url", at: path, required: true)
        }
        let timeout = reader.duration(fields, "timeout", at: path, positive: true)
        var secret: WebhookSecret?
        if fields["secret"] != nil, let text = reader.secret(fields, "secret", at: path) {
            do {
                secret = try WebhookSecret(text)
            } catch {
                reader.report("\(path).secret", "\(error.description); write \"whsec_\" and 24 to 64 random bytes in base64 (for example: echo whsec_$(openssl rand -base64 32))")
                valid = false
            }
        } else if fields["secret"] != nil {
            valid = false
        }
        var headers: [String: String] = [:]
        if let value = fields["headers"] {
            if case .object(let entries) = value {
                for name in entries.keys.sorted() {
                    let here = "\(path).headers.\(name)"
                    guard !name.isEmpty, name.utf8.allSatisfy(Self.isHeaderTokenByte) else {
                        reader.report(here, "\"\(name.prefix(40))\" is not a header name (letters, digits and !#$%&'*+-.^_`|~)")
                        valid = false
                        continue
                    }
                    guard !Self.reservedWebhookHeaders.contains(name.lowercased()) else {
                        reader.report(here, "set by Herald itself; it cannot be configured")
                        valid = false
                        continue
                    }
                    guard let text = reader.secret(entries, name, at: "\(path).headers") else {
                        valid = false
                        continue
                    }
                    guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                        reader.report(here, "the value holds a line break or another control character")
                        valid = false
                        continue
                    }
                    headers[name] = text
                }
            } else {
                reader.report("\(path).headers", "expected an object of header names and values, got \(value.shown)")
                valid = false
            }
        }
        guard valid, let endpoint else { return nil }
        return .webhook(endpoint: endpoint, secret: secret, headers: headers, timeout: timeout)
    }

    /// RFC 9110 `tchar`.
    static func isHeaderTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): true
        default: Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// A webhook rule's `body`: a JSON object or array whose strings are templates.
    func readWebhookTarget(_ fields: [String: ConfigJSON], path: String, _ reader: ConfigReader) -> WebhookBodyTemplate? {
        var valid = true
        for key in ["text", "media", "bucket", "fields"] where fields[key] != nil {
            reader.report("\(path).\(key)", "not for a webhook service; a webhook service delivers \"body\" (a JSON template)")
            valid = false
        }
        guard let body = fields["body"] else {
            reader.report("\(path).body", "required: the JSON body to deliver, e.g. {\"text\": \"{{item.title}} {{item.link}}\"}")
            return nil
        }
        switch body {
        case .object, .array: break
        default:
            reader.report("\(path).body", "expected a JSON object or array (the body's template), got \(body.shown)")
            return nil
        }
        do {
            let template = try WebhookBodyTemplate(body)
            return valid ? template : nil
        } catch {
            reader.report("\(path).body", error.description)
            return nil
        }
    }
}
