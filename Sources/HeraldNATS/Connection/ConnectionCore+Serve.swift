import Foundation
import HeraldIO
import HeraldSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The I/O thread's inner loop while connected: write what callers queued (many publishes per
/// `send`), read and dispatch what the server sent, expire reply deadlines, keep the
/// connection alive with pings. It sleeps only in `poll`, on the socket and the wake pipe.
extension ConnectionCore {
    /// Serves one connection until it drops (returns the reason) or the client closes (returns
    /// after flushing what was queued, within the connect timeout).
    func serve(_ session: inout Session) -> String {
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        var liveness = ConnectionMachine.Liveness(interval: options.pingInterval, maxOutstanding: options.maxPingsOutstanding,
                                                  from: ContinuousClock.now)
        var closeDeadline: ContinuousClock.Instant?
        // What came behind the handshake's PONG in the same read is already in the parser: the
        // socket will not signal it again.
        if let reason = dispatchBuffered(&session, liveness: &liveness) { return reason }
        while true {
            // Take the next chunk of queued frames once the previous one is written.
            var closing = false
            if session.written == session.writing.count {
                closing = state.withLock { state -> Bool in
                    if !state.outbound.isEmpty {
                        session.writing.removeAll(keepingCapacity: true)
                        swap(&session.writing, &state.outbound)
                        session.written = 0
                    }
                    state.wakePending = false
                    return state.phase == .closing
                }
            } else {
                closing = isClosing
            }
            if closing {
                if session.written == session.writing.count { return "closed by the client" }
                if closeDeadline == nil { closeDeadline = ContinuousClock.now.advanced(by: options.connectTimeout) }
                if let closeDeadline, ContinuousClock.now >= closeDeadline { return "closed by the client (unflushed data dropped)" }
            }
            while session.written < session.writing.count {
                let result = session.writing.withUnsafeBytes {
                    session.stream.write(UnsafeRawBufferPointer(rebasing: $0[session.written...]))
                }
                if case .bytes(let count) = result { session.written += count; continue }
                if case .failed(let error) = result { return "writing to the server failed: \(error)" }
                break
            }
            // More frames queued meanwhile: look at the socket without sleeping, then take them.
            let moreQueued = session.written == session.writing.count && hasQueuedFrames
            if closing, session.written == session.writing.count, !moreQueued { return "closed by the client" }

            let now = ContinuousClock.now
            var wakeAt = moreQueued || session.readAgain ? now : liveness.nextPing
            if let deadline = state.withLock({ $0.deadlines.earliest }), deadline < wakeAt { wakeAt = deadline }
            if let closeDeadline, closeDeadline < wakeAt { wakeAt = closeDeadline }
            let wantsWrite = session.written < session.writing.count || session.readWantsWrite
            var descriptors = [
                pollfd(fd: session.socket, events: Int16(POLLIN) | (wantsWrite ? Int16(POLLOUT) : 0), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, 2, Poll.milliseconds(now.duration(to: wakeAt)))
            if ready < 0, errno != EINTR { return "waiting on the connection failed: \(SystemError.current)" }
            if descriptors[1].revents != 0 { WakePipe.drain(wakeRead) }
            if session.readAgain || descriptors[0].revents & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0
                || (session.readWantsWrite && descriptors[0].revents & Int16(POLLOUT) != 0) {
                if let reason = readAvailable(&session, chunk: &chunk, liveness: &liveness) { return reason }
            }
            let after = ContinuousClock.now
            // A request that got no answer in time may mean a server that stopped answering:
            // ping it now rather than at the next interval (before anyone hears of the timeout).
            expireRoutes(at: after) { state in
                guard liveness.requestTimedOut(at: after) else { return }
                sendKeepAlivePing(&state)
            }
            switch liveness.tick(at: after) {
            case .none: break
            case .stale(let reason): return reason
            case .ping: state.withLock { sendKeepAlivePing(&$0) }
            }
        }
    }

    private var hasQueuedFrames: Bool { state.withLock { !$0.outbound.isEmpty } }

    /// Queues a keep-alive PING, with the lock held.
    private func sendKeepAlivePing(_ state: inout CoreState) {
        state.machine.keepAlivePingSent()
        state.outbound.append(contentsOf: NATSClientFrames.ping)
    }

    /// Reads what is waiting (a few chunks at most, so writes are not starved) and dispatches it.
    /// - Returns: the reason the connection is lost, or nil.
    private func readAvailable(_ session: inout Session, chunk: inout [UInt8], liveness: inout ConnectionMachine.Liveness) -> String? {
        session.readAgain = false
        session.readWantsWrite = false
        // TLS answers a record (16 KiB at most) per read: read on until it wants more from the socket.
        let reads = session.isTLS ? 64 : 4
        for _ in 0..<reads {
            let count: Int
            switch chunk.withUnsafeMutableBytes({ session.stream.read(into: $0) }) {
            case .bytes(let read): count = read
            case .closed: return "the server closed the connection"
            case .failed(let error): return "reading from the server failed: \(error)"
            case .wantRead: return nil
            case .wantWrite:
                session.readWantsWrite = true
                return nil
            }
            chunk.withUnsafeBytes { session.parser.feed(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            if let reason = dispatchBuffered(&session, liveness: &liveness) { return reason }
            if !session.isTLS, count < chunk.count { return nil }
        }
        // Stopped at the cap, so writes are not starved: bytes may still wait (in TLS's buffer
        // too, which the socket does not signal).
        session.readAgain = true
        return nil
    }

    /// Dispatches every whole operation the parser holds.
    /// - Returns: the reason the connection is lost (bytes that are not the protocol), or nil.
    private func dispatchBuffered(_ session: inout Session, liveness: inout ConnectionMachine.Liveness) -> String? {
        do throws(NATSProtocolError) {
            while let operation = try session.parser.next() {
                dispatch(operation, session: &session, liveness: &liveness)
            }
        } catch {
            emit(.serverError("protocol violation: \(error)"))
            return "the server sent bytes that are not the NATS protocol: \(error)"
        }
        return nil
    }

    /// Ends the routes whose deadline has passed; when one did, `timedOut` runs first, under the lock.
    func expireRoutes(at now: ContinuousClock.Instant, timedOut: (inout CoreState) -> Void = { _ in }) {
        let expired = state.withLock { state -> [ReplyRoute] in
            var expired: [ReplyRoute] = []
            while let token = state.deadlines.popDue(now) {
                if let route = state.replies[token], route.deadline <= now, let removed = removeRoute(token, &state) {
                    expired.append(removed)
                }
            }
            if !expired.isEmpty { timedOut(&state) }
            return expired
        }
        for route in expired { route.onEnd(.timeout(route.subject, after: route.timeout)) }
    }
}
