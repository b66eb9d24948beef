import Foundation

/// Scripted outcomes and the `/_sandbox/faults` and `/_sandbox/objects/` control paths.
extension SandboxRouter {
    /// A scripted answer: an error or a drop never reaches the emulator (no side effect); a
    /// delay serves the request normally, later, without random faults.
    func respond(to request: SandboxRequest, scripted: SandboxScriptedFault) -> SandboxResponse {
        var response: SandboxResponse
        switch scripted {
        case .status(let status, let code):
            response = scriptedError(status, code: code, path: request.path)
        case .drop:
            response = SandboxResponse(status: 500)
            response.delivery = .drop
        case .delay(let pause):
            response = serve(request)
            response.delay = pause
            return response
        }
        response.delay = faults.faults.latency
        return response
    }

    private func scriptedError(_ status: Int, code: Int?, path: String) -> SandboxResponse {
        let injected = "(scripted by the sandbox)"
        var headers: [(name: String, value: String)] = []
        if status == 429 || status == 503 { headers.append(("Retry-After", "1")) }
        if MastodonEmulator.handles(path) {
            return mastodonScriptedError(status, path: path, headers: headers)
        }
        if path.hasPrefix("/1.1/") || !(path.hasPrefix("/1/") || path.hasPrefix("/search") || path.hasPrefix("/img/")) {
            if status == 429 {
                // The reset lies a second or so ahead of the sandbox's clock, in epoch seconds.
                let reset = configuration.now().addingTimeInterval(1).timeIntervalSince1970.rounded(.up)
                headers += [
                    ("x-rate-limit-limit", String(configuration.homeTimelineLimit)), ("x-rate-limit-remaining", "0"),
                    ("x-rate-limit-reset", String(Int(reset))),
                ]
            }
            if path.hasPrefix("/2/") { return XEncoding.scripted(status, note: injected, headers: headers) }
            let (defaultCode, message) = Self.twitterDefaults(status)
            return .twitterError(status, code: code ?? defaultCode, "\(message) \(injected)", headers: headers)
        }
        // BaaS and Tiqav answer errors as {"error": "…"}.
        let reason = SandboxResponse.reasonPhrases[status] ?? "Error"
        var body: [(String, SandboxJSON)] = [("error", .string("\(reason) \(injected)"))]
        if let code { body.append(("code", .int(Int64(code)))) }
        return .json(status, .object(body), headers: headers)
    }

    /// The Twitter-style code and message a scripted status carries when none is given.
    static func twitterDefaults(_ status: Int) -> (code: Int, message: String) {
        switch status {
        case 400: (215, "Bad Authentication data.")
        case 401: (32, "Could not authenticate you.")
        case 403: (185, "User is over daily status update limit.")
        case 404: (34, "Sorry, that page does not exist.")
        case 429: (88, "Rate limit exceeded.")
        case 500...599: (131, "Internal error.")
        default: (0, SandboxResponse.reasonPhrases[status] ?? "Error.")
        }
    }

    /// `POST` appends a script, `GET` shows what is left, `DELETE` clears (all, or `?path=`).
    func faultsControl(_ request: SandboxRequest) -> SandboxResponse {
        switch request.method {
        case "GET":
            break
        case "POST":
            let added: SandboxFaultScript
            do throws(SandboxScriptError) {
                added = try SandboxFaultScript.parse(request.body)
                try script.append(added)
            } catch {
                return .json(400, .object([("error", .string(error.message))]))
            }
            var response = SandboxResponse.json(200, .object([("scripts", .array(script.remaining().map(\.json)))]))
            response.closesIdleConnections = added.outcomes.contains(.drop)
            return response
        case "DELETE":
            script.clear(path: request.query("path"))
        default:
            return .json(405, .object([("error", .string("use GET, POST or DELETE on /_sandbox/faults"))]),
                         headers: [("Allow", "GET, POST, DELETE")])
        }
        return .json(200, .object([("scripts", .array(script.remaining().map(\.json)))]))
    }

    /// The objects of a BaaS bucket, with no application keys needed, so a test or a tool can
    /// count what was created: `{"bucket":"todos","count":N,"created":M,"objects":[…]}`,
    /// where `created` counts those made by clients (not grown by `todoInterval`).
    func objectsControl(_ bucket: String) -> SandboxResponse {
        guard !bucket.isEmpty, !bucket.contains("/") else {
            return .json(404, .object([("error", .string("use /_sandbox/objects/{bucket}"))]))
        }
        let objects = baas.objects(in: bucket)
        return .json(200, .object([
            ("bucket", .string(bucket)), ("count", .int(Int64(objects.count))),
            ("created", .int(Int64(objects.filter { !$0.object.isGenerated }.count))),
            ("objects", .array(objects.map(\.json))),
        ]))
    }
}
