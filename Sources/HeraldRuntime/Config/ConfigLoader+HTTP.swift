extension ConfigLoader {
    /// The `http` section, or nil when it is absent (no status endpoint) or invalid (reported).
    func readHTTP(_ value: ConfigJSON?, _ reader: ConfigReader) -> HTTPSettings? {
        guard let value, let fields = reader.object(value, at: "http", allowed: ["listen", "allowRemote"]) else { return nil }
        var allowRemote = false
        switch fields["allowRemote"] {
        case nil: break
        case .bool(let flag)?: allowRemote = flag
        case let other?: reader.report("http.allowRemote", "expected true or false, got \(reader.shown(other, at: "http.allowRemote"))")
        }
        guard let listen = reader.string(fields, "listen", at: "http", required: true) else { return nil }
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
              (0...65535).contains(port), listen[listen.index(after: colon)...].allSatisfy(\.isNumber)
        else {
            reader.report("http.listen", "\"\(listen)\" is not HOST:PORT (an IPv4 address and a port 0...65535, e.g. \"127.0.0.1:8420\")")
            return nil
        }
        var host = String(listen[..<colon])
        if host == "localhost" { host = "127.0.0.1" }
        guard HTTPSettings.ipv4Octets(host) != nil else {
            reader.report("http.listen", "\"\(host)\" is not an IPv4 address (write 127.0.0.1, or 0.0.0.0 for every interface)")
            return nil
        }
        guard HTTPSettings.isLoopback(host) || allowRemote else {
            reader.report("http.listen", "\(host) is not a loopback address; the endpoint has no authentication and streams every event, "
                + "so serving other machines must be asked for with \"allowRemote\": true")
            return nil
        }
        return HTTPSettings(host: host, port: port, allowRemote: allowRemote)
    }

    /// The status endpoint and the embedded sandbox (when a service uses it) cannot share a
    /// port: `herald run` starts both, and the second could not listen.
    func checkPorts(http: HTTPSettings?, sandbox: SandboxSettings, services: [String: ServiceConfiguration?]?, _ reader: ConfigReader) {
        guard let http, http.port != 0, http.port == sandbox.port, ["127.0.0.1", "0.0.0.0"].contains(http.host),
              services?.values.contains(where: { $0?.endpoint == .sandbox }) == true else { return }
        reader.report("http.listen", "port \(http.port) is sandbox.port too, where the embedded sandbox listens; give the endpoint another")
    }
}
