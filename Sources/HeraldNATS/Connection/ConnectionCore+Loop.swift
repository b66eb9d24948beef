import Foundation
import HeraldIO
import HeraldSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The I/O thread's outer loop: connect, serve, and on a drop move to the next server after the
/// backoff, until closed.
extension ConnectionCore {
    /// The thread's body. Ends by calling ``finish(reason:connectError:)``.
    func runLoop() {
        while true {
            if isClosing { return finish(reason: "closed by the client") }
            // Between connections requests still time out: at the latest when an attempt ends.
            expireRoutes(at: ContinuousClock.now)
            let (server, failures) = state.withLock { state in
                let next = state.machine.nextAttempt(serverCount: state.servers.count)
                return (state.servers[next.server], next.failures)
            }
            if failures > 0, !sleepUnlessClosed(options.reconnectDelay(failures)) {
                return finish(reason: "closed by the client")
            }
            do throws(NATSError) {
                var session = try handshake(with: server)
                becomeConnected(&session, server: server)
                let reason = serve(&session)
                session.stream.close()
                if isClosing { return finish(reason: "closed by the client") }
                if case .giveUp(let reason, let error) = becomeDisconnected(from: server, session: session, reason: reason) {
                    return finish(reason: reason, connectError: error)
                }
            } catch {
                if isClosing { return finish(reason: "closed by the client") }
                let next = state.withLock { state in
                    state.machine.attemptFailed(server: server.description, message: error.message,
                                                serverCount: state.servers.count)
                }
                emit(.connectFailed(server: server.description, reason: error.message))
                if case .giveUp(let reason, let error) = next { return finish(reason: reason, connectError: error) }
            }
        }
    }

    var isClosing: Bool { state.withLock { $0.machine.isClosing } }

    /// After a wake-up seen during the handshake: the next caller must poke again (a close, say),
    /// and whether the client is closing.
    private func acknowledgeWake() -> Bool {
        state.withLock { state in
            state.wakePending = false
            return state.machine.isClosing
        }
    }

    /// Waits on the wake pipe for `duration`, ending the requests whose time runs out
    /// meanwhile; false when the client closed.
    private func sleepUnlessClosed(_ duration: Duration) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: duration)
        while ContinuousClock.now < deadline {
            if isClosing { return false }
            var wakeAt = deadline
            if let route = state.withLock({ $0.deadlines.earliest }), route < wakeAt { wakeAt = route }
            var descriptor = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
            let count = poll(&descriptor, 1, Poll.milliseconds(ContinuousClock.now.duration(to: wakeAt)))
            if count > 0 {
                WakePipe.drain(wakeRead)
                state.withLock { $0.wakePending = false }
            }
            expireRoutes(at: ContinuousClock.now)
        }
        return !isClosing
    }

    /// The socket and parser of one connection, owned by the I/O thread.
    struct Session {
        /// The socket, for `poll`.
        var socket: Int32
        /// What reads and writes go through: the socket itself, or TLS over it.
        var stream: any ByteStream
        /// Whether ``stream`` is TLS (which may hold decrypted bytes the socket no longer signals).
        var isTLS = false
        /// A read wanted the socket writable (TLS): poll for output too.
        var readWantsWrite = false
        /// The last read stopped at its cap with bytes maybe still waiting: read again before sleeping.
        var readAgain = false
        var parser: NATSProtocolParser
        var info: NATSServerInfo
        /// The chunk taken from the shared buffer and being written, and how much of it is written.
        var writing: [UInt8] = []
        var written = 0
    }

    /// TCP connect, `INFO`, `CONNECT` + `PING`, and the `PONG`, all before the connect timeout.
    private func handshake(with server: NATSServerAddress) throws(NATSError) -> Session {
        let deadline = ContinuousClock.now.advanced(by: options.connectTimeout)
        let socket: TCPSocket
        do throws(TCPSocket.ConnectError) {
            socket = try TCPSocket.connect(host: server.host, port: server.port, before: deadline, wake: wakeRead) { acknowledgeWake() }
        } catch .timedOut, .stopped {
            throw .connectionFailed("\(server): \(SystemError.text(ETIMEDOUT))")
        } catch {
            throw .connectionFailed("\(server): \(error)")
        }
        var session = Session(socket: socket.descriptor, stream: socket, parser: NATSProtocolParser(maxControlLine: options.maxControlLine),
                              info: try NATSServerInfo.decode(Array("{}".utf8)))
        do throws(NATSError) {
            guard case .info(let json) = try nextOperation(&session, server: server, before: deadline) else {
                throw .protocolViolation("\(server) did not start with INFO")
            }
            session.info = try NATSServerInfo.decode(json)
            if let configuration = try tlsConfiguration(for: server, info: session.info) {
                try upgrade(&session, to: configuration, server: server, before: deadline)
            }
            session.parser.maxPayload = payloadLimit(session.info)
            var hello = Array("CONNECT ".utf8)
            hello.append(contentsOf: try connectJSON(for: server, nonce: session.info.nonce, tls: session.isTLS))
            hello.append(contentsOf: NATSClientFrames.crlf)
            hello.append(contentsOf: NATSClientFrames.ping)
            try writeAll(hello, on: &session, server: server, before: deadline)
            while true {
                switch try nextOperation(&session, server: server, before: deadline) {
                case .pong: return session
                case .error(let text): throw .connectionFailed("\(server) refused the connection: -ERR '\(text)'")
                case .ping: try writeAll(NATSClientFrames.pong, on: &session, server: server, before: deadline)
                case .info(let json): session.info = try NATSServerInfo.decode(json)
                case .ok, .message: continue
                }
            }
        } catch {
            session.stream.close()
            throw error
        }
    }

    /// The TLS to speak with `server`: the options' (a client told to use TLS), or, for a
    /// `tls://` address or a server that requires it, verification against the system's roots.
    /// - Throws: when TLS is wanted and the server offers none.
    private func tlsConfiguration(for server: NATSServerAddress, info: NATSServerInfo) throws(NATSError) -> TLSConfiguration? {
        guard let configuration = options.tls ?? (server.tls || info.tlsRequired ? TLSConfiguration() : nil) else { return nil }
        guard info.tlsRequired || info.tlsAvailable else {
            throw .connectionFailed("\(server) does not offer TLS, which this client is configured to require")
        }
        return configuration
    }

    /// Upgrades the connection to TLS after `INFO` (as NATS servers expect): the handshake, with
    /// the server's certificate checked against `configuration` and the address's host name.
    private func upgrade(_ session: inout Session, to configuration: TLSConfiguration, server: NATSServerAddress,
                         before deadline: ContinuousClock.Instant) throws(NATSError) {
        let tls: TLSStream
        do throws(SystemCryptoError) {
            tls = try TLSStream(socket: TCPSocket(descriptor: session.socket), context: try TLSContext(configuration), serverName: server.host)
        } catch {
            throw .connectionFailed("\(server): TLS cannot be set up: \(error)")
        }
        session.stream = tls
        session.isTLS = true
        while true {
            let events: Int16
            switch tls.handshake() {
            case .bytes: return
            case .wantRead: events = Poll.input
            case .wantWrite: events = Poll.output
            case .closed: throw .connectionFailed("\(server) closed the connection during the TLS handshake")
            case .failed(let error): throw .connectionFailed("\(server): the TLS handshake failed: \(error)")
            }
            if isClosing { throw .closed }
            guard case .ready = Poll.wait(session.socket, for: events, wake: wakeRead, deadline: deadline, stop: { acknowledgeWake() }) else {
                throw .connectionFailed("\(server) did not complete the TLS handshake within \(options.connectTimeout)")
            }
        }
    }

    /// `CONNECT`'s JSON: headers and no-responders on, verbose off, the credentials if any (a
    /// JWT or an NKey signs the server's `nonce`).
    private func connectJSON(for server: NATSServerAddress, nonce: String?, tls: Bool) throws(NATSError) -> [UInt8] {
        var fields: [String: Any] = [
            "verbose": false, "pedantic": false, "tls_required": tls, "lang": "swift", "version": "1.0.0",
            "protocol": 1, "headers": true, "no_responders": true, "echo": true,
        ]
        if let name = options.name { fields["name"] = name }
        if let token = server.token ?? options.token { fields["auth_token"] = token }
        if let user = server.user ?? options.user {
            fields["user"] = user
            fields["pass"] = server.password ?? options.password ?? ""
        }
        if let key = options.userCredentials?.keyPair ?? options.nkey {
            guard let nonce else {
                throw .connectionFailed("\(server) sent no nonce to sign: it is not configured for NKey or JWT authentication")
            }
            fields["sig"] = try key.signNonce(nonce)
            if let credentials = options.userCredentials {
                fields["jwt"] = credentials.jwt
            } else {
                fields["nkey"] = key.publicKey
            }
        }
        let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data("{}".utf8)
        return Array(data)
    }

    /// Reads until the parser yields an operation (during the handshake only).
    private func nextOperation(_ session: inout Session, server: NATSServerAddress, before deadline: ContinuousClock.Instant) throws(NATSError) -> NATSServerOperation {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            do throws(NATSProtocolError) {
                if let operation = try session.parser.next() { return operation }
            } catch {
                throw .protocolViolation("\(server): \(error)")
            }
            let events: Int16
            switch chunk.withUnsafeMutableBytes({ session.stream.read(into: $0) }) {
            case .bytes(let count):
                chunk.withUnsafeBytes { session.parser.feed(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                continue
            case .closed: throw .connectionFailed("\(server) closed the connection during the handshake")
            case .failed(let error): throw .connectionFailed("\(server): \(error)")
            case .wantRead: events = Poll.input
            case .wantWrite: events = Poll.output
            }
            if isClosing { throw .closed }
            guard case .ready = Poll.wait(session.socket, for: events, wake: wakeRead, deadline: deadline, stop: { acknowledgeWake() }) else {
                throw .connectionFailed("\(server) did not complete the handshake within \(options.connectTimeout)")
            }
        }
    }

    private func writeAll(_ bytes: [UInt8], on session: inout Session, server: NATSServerAddress, before deadline: ContinuousClock.Instant) throws(NATSError) {
        var offset = 0
        while offset < bytes.count {
            let events: Int16
            switch bytes.withUnsafeBytes({ session.stream.write(UnsafeRawBufferPointer(rebasing: $0[offset...])) }) {
            case .bytes(let count): offset += count; continue
            case .failed(let error): throw .connectionFailed("\(server): \(error)")
            case .closed: throw .connectionFailed("\(server) closed the connection during the handshake")
            case .wantRead: events = Poll.input
            case .wantWrite: events = Poll.output
            }
            guard case .ready = Poll.wait(session.socket, for: events, wake: wakeRead, deadline: deadline, stop: { acknowledgeWake() }) else {
                throw .connectionFailed("\(server) did not take the handshake within \(options.connectTimeout)")
            }
        }
    }

    /// Publishes the connection: subscriptions are sent again ahead of what was buffered. A
    /// close that came during the handshake wins: the phase stays `.closing` (serve then ends
    /// at once) and the waiters are left to ``finish(reason:connectError:)``.
    private func becomeConnected(_ session: inout Session, server: NATSServerAddress) {
        let connected = state.withLock { state -> (first: Bool, discovered: [String], waiters: [CheckedContinuation<Void, any Error>], drops: (messages: Int, bytes: Int))? in
            // Its PONG proves the connection healthy (see ConnectionMachine): the server took
            // what was sent again and answers.
            guard let (first, waiters) = state.machine.connected(at: ContinuousClock.now) else { return nil }
            var resend: [UInt8] = []
            for (sid, record) in state.subscriptions.sorted(by: { $0.key < $1.key }) {
                NATSClientFrames.appendSubscribe(into: &resend, subject: record.subject, queue: record.queue, sid: sid)
                if let max = record.max { NATSClientFrames.appendUnsubscribe(into: &resend, sid: sid, max: max - record.delivered) }
            }
            resend.append(contentsOf: state.outbound)
            resend.append(contentsOf: NATSClientFrames.ping)
            state.outbound = resend
            state.bufferedMessages = 0
            state.info = session.info
            state.maxPayload = payloadLimit(session.info)
            state.currentServer = server.description
            state.reportedDropThisOutage = false
            if !first { state.statistics.reconnects += 1 }
            let discovered = learnServers(&state, from: session.info)
            let drops = state.unreportedDrops
            state.unreportedDrops = (0, 0)
            wake(&state)
            return (first, discovered, waiters, drops)
        }
        guard let (first, discovered, waiters, drops) = connected else { return }
        if drops.messages > 0 { emit(.dropped(messages: drops.messages, bytes: drops.bytes)) }
        emit(first ? .connected(server: server.description) : .reconnected(server: server.description))
        if !discovered.isEmpty { emit(.discoveredServers(discovered)) }
        for waiter in waiters { waiter.resume() }
    }

    /// Adds the servers an `INFO` announces; returns the new ones.
    func learnServers(_ state: inout CoreState, from info: NATSServerInfo) -> [String] {
        guard !options.ignoreDiscoveredServers else { return [] }
        var added: [String] = []
        for url in info.connectURLs {
            guard let address = try? NATSServerAddress(parsing: url) else { continue }
            if !state.servers.contains(where: { $0.sameEndpoint(as: address) }) {
                state.servers.append(address)
                added.append(address.description)
            }
        }
        return added
    }

    /// Moves to `.reconnecting`: waiters of the lost connection fail, unsent publishes are kept
    /// (the one cut in half by the drop is sent again whole), control frames are left behind.
    /// Returns what the machine decided next (see ``ConnectionMachine/disconnected(from:reason:at:)``).
    private func becomeDisconnected(from server: NATSServerAddress, session: Session, reason: String) -> ConnectionMachine.NextStep {
        let (pongs, next) = state.withLock { state in
            var kept: [UInt8] = []
            var messages = 0
            for frame in NATSClientFrames.frames(in: session.writing) where frame.kind == .publish && frame.range.upperBound > session.written {
                kept.append(contentsOf: session.writing[frame.range])
                messages += 1
            }
            for frame in NATSClientFrames.frames(in: state.outbound) where frame.kind == .publish {
                kept.append(contentsOf: state.outbound[frame.range])
                messages += 1
            }
            state.outbound = kept
            state.bufferedMessages = messages
            // A close that came as the connection dropped wins: the loop then finishes.
            return state.machine.disconnected(from: server.description, reason: reason, at: ContinuousClock.now)
        }
        for pong in pongs { pong.resume(throwing: NATSError.notConnected) }
        emit(.disconnected(server: server.description, reason: reason))
        return next
    }
}
