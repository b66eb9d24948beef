import Foundation
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
        var failures = 0
        var everConnected = false
        var next = 0
        var firstPassReasons: [String] = []
        while true {
            if isClosing { return finish(reason: "closed by the client") }
            if failures > 0, !sleepUnlessClosed(options.reconnectDelay(failures)) {
                return finish(reason: "closed by the client")
            }
            let server = state.withLock { state in state.servers[next % state.servers.count] }
            next += 1
            do throws(NATSError) {
                var session = try handshake(with: server)
                failures = 0
                becomeConnected(&session, server: server, first: !everConnected)
                everConnected = true
                let reason = serve(&session)
                NATSSocket.close(session.socket)
                if isClosing { return finish(reason: "closed by the client") }
                becomeDisconnected(from: server, session: session, reason: reason)
                guard options.allowReconnect else { return finish(reason: "disconnected and reconnecting is off: \(reason)") }
            } catch {
                if isClosing { return finish(reason: "closed by the client") }
                failures += 1
                emit(.connectFailed(server: server.description, reason: error.message))
                if !everConnected {
                    firstPassReasons.append(error.message)
                    let serverCount = state.withLock { $0.servers.count }
                    if !options.retryOnFailedConnect, failures >= serverCount {
                        let message = "no server accepted the connection: " + firstPassReasons.joined(separator: "; ")
                        return finish(reason: message, connectError: .connectionFailed(message))
                    }
                } else if let limit = options.maxReconnectAttempts, failures >= limit {
                    return finish(reason: "\(failures) reconnect attempts failed; the last: \(error.message)")
                }
            }
        }
    }

    var isClosing: Bool { state.withLock { $0.phase == .closing || $0.phase == .closed } }

    /// Waits on the wake pipe for `duration`; false when the client closed meanwhile.
    private func sleepUnlessClosed(_ duration: Duration) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: duration)
        while ContinuousClock.now < deadline {
            if isClosing { return false }
            var descriptor = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
            let count = poll(&descriptor, 1, NATSSocket.milliseconds(ContinuousClock.now.duration(to: deadline)))
            if count > 0 {
                NATSSocket.drain(wakeRead)
                state.withLock { $0.wakePending = false }
            }
        }
        return !isClosing
    }

    /// The socket and parser of one connection, owned by the I/O thread.
    struct Session {
        var socket: Int32
        var parser: NATSProtocolParser
        var info: NATSServerInfo
        /// The chunk taken from the shared buffer and being written, and how much of it is written.
        var writing: [UInt8] = []
        var written = 0
    }

    /// TCP connect, `INFO`, `CONNECT` + `PING`, and the `PONG`, all before the connect timeout.
    private func handshake(with server: NATSServerAddress) throws(NATSError) -> Session {
        let deadline = ContinuousClock.now.advanced(by: options.connectTimeout)
        let socket = try NATSSocket.connect(to: server, before: deadline, wake: wakeRead)
        var session = Session(socket: socket, parser: NATSProtocolParser(maxControlLine: options.maxControlLine),
                              info: try NATSServerInfo.decode(Array("{}".utf8)))
        do throws(NATSError) {
            guard case .info(let json) = try nextOperation(&session, server: server, before: deadline) else {
                throw .protocolViolation("\(server) did not start with INFO")
            }
            session.info = try NATSServerInfo.decode(json)
            guard !session.info.tlsRequired else { throw .connectionFailed("\(server) requires TLS, which this client does not speak") }
            session.parser.maxPayload = max(session.info.maxPayload, 1)
            var hello = Array("CONNECT ".utf8)
            hello.append(contentsOf: connectJSON(for: server))
            hello.append(contentsOf: NATSClientFrames.crlf)
            hello.append(contentsOf: NATSClientFrames.ping)
            try writeAll(hello, on: socket, server: server, before: deadline)
            while true {
                switch try nextOperation(&session, server: server, before: deadline) {
                case .pong: return session
                case .error(let text): throw .connectionFailed("\(server) refused the connection: -ERR '\(text)'")
                case .ping: try writeAll(NATSClientFrames.pong, on: socket, server: server, before: deadline)
                case .info(let json): session.info = try NATSServerInfo.decode(json)
                case .ok, .message: continue
                }
            }
        } catch {
            NATSSocket.close(socket)
            throw error
        }
    }

    /// `CONNECT`'s JSON: headers and no-responders on, verbose off, the credentials if any.
    private func connectJSON(for server: NATSServerAddress) -> [UInt8] {
        var fields: [String: Any] = [
            "verbose": false, "pedantic": false, "tls_required": false, "lang": "swift", "version": "1.0.0",
            "protocol": 1, "headers": true, "no_responders": true, "echo": true,
        ]
        if let name = options.name { fields["name"] = name }
        if let token = server.token ?? options.token { fields["auth_token"] = token }
        if let user = server.user ?? options.user {
            fields["user"] = user
            fields["pass"] = server.password ?? options.password ?? ""
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
            let count = chunk.withUnsafeMutableBytes { NATSSocket.receive(session.socket, $0) }
            if count > 0 {
                chunk.withUnsafeBytes { session.parser.feed(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                continue
            }
            if count == 0 { throw .connectionFailed("\(server) closed the connection during the handshake") }
            let code = errno
            if code == EINTR { continue }
            guard code == EAGAIN || code == EWOULDBLOCK else { throw .connectionFailed("\(server): \(NATSSocket.reason(code))") }
            if isClosing { throw .closed }
            guard NATSSocket.waitUntil(session.socket, events: Int16(POLLIN), wake: wakeRead, deadline: deadline) else {
                throw .connectionFailed("\(server) did not complete the handshake within \(options.connectTimeout)")
            }
        }
    }

    private func writeAll(_ bytes: [UInt8], on socket: Int32, server: NATSServerAddress, before deadline: ContinuousClock.Instant) throws(NATSError) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { NATSSocket.send(socket, UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            if count > 0 { offset += count; continue }
            let code = errno
            if code == EINTR { continue }
            guard code == EAGAIN || code == EWOULDBLOCK else { throw .connectionFailed("\(server): \(NATSSocket.reason(code))") }
            guard NATSSocket.waitUntil(socket, events: Int16(POLLOUT), wake: wakeRead, deadline: deadline) else {
                throw .connectionFailed("\(server) did not take the handshake within \(options.connectTimeout)")
            }
        }
    }

    /// Publishes the connection: subscriptions are sent again ahead of what was buffered.
    private func becomeConnected(_ session: inout Session, server: NATSServerAddress, first: Bool) {
        let (discovered, waiters, drops) = state.withLock { state in
            var resend: [UInt8] = []
            for (sid, record) in state.subscriptions.sorted(by: { $0.key < $1.key }) {
                NATSClientFrames.appendSubscribe(into: &resend, subject: record.subject, queue: record.queue, sid: sid)
                if let max = record.max { NATSClientFrames.appendUnsubscribe(into: &resend, sid: sid, max: max - record.delivered) }
            }
            resend.append(contentsOf: state.outbound)
            state.outbound = resend
            state.bufferedMessages = 0
            state.phase = .connected
            state.info = session.info
            state.maxPayload = session.info.maxPayload
            state.currentServer = server.description
            state.reportedDropThisOutage = false
            if !first { state.statistics.reconnects += 1 }
            let discovered = learnServers(&state, from: session.info)
            let waiters = state.connectWaiters
            state.connectWaiters.removeAll()
            let drops = state.unreportedDrops
            state.unreportedDrops = (0, 0)
            wake(&state)
            return (discovered, waiters, drops)
        }
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
    private func becomeDisconnected(from server: NATSServerAddress, session: Session, reason: String) {
        let pongs = state.withLock { state -> [CoreState.PongWaiter] in
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
            state.phase = .reconnecting
            let pongs = state.pongWaiters
            state.pongWaiters.removeAll()
            return pongs
        }
        for pong in pongs { if case .client(let continuation) = pong { continuation.resume(throwing: NATSError.notConnected) } }
        emit(.disconnected(server: server.description, reason: reason))
    }
}
