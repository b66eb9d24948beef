import Foundation
import HeraldSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP proxy of the tests' own on loopback, between a client and a server (a daemon and its
/// nats-server, or two nats-servers' cluster routes), whose behaviour a test switches on command
/// (``mode``): pass, delay every chunk read by a duration, blackhole (accept and read, drop
/// everything, never reset), drop one direction only, reset each connection inside a frame
/// after some bytes, or hold the rest of a frame once a marker passed; ``resetAll()`` resets
/// every connection.
///
/// Every connection is pumped by two threads of its own (one per direction) with `poll(2)` and
/// non-blocking sockets, never the cooperative pool. A connection that lost bytes while
/// blackholed or dropping is reset when the mode changes back to pass or delay: the byte stream
/// it carried has a hole, which TCP never leaves (a real connection would have timed out).
public final class FaultProxy: Sendable {
    /// What the proxy does with the bytes it reads.
    public enum Mode: Sendable, Equatable, CustomStringConvertible {
        /// Forwards every byte at once.
        case pass
        /// Forwards every chunk `by` after it was read, in order.
        case delay(Duration)
        /// Accepts connections and reads everything, forwards nothing, resets nothing.
        case blackhole
        /// Drops what the client sends (towards the server); forwards the other way.
        case dropToServer
        /// Drops what the server sends (towards the client); forwards the other way.
        case dropToClient
        /// Forwards; each connection, once it carried `bytes` towards the client in this mode, is
        /// reset inside a frame: the last byte the client gets is never a line end (every NATS
        /// frame ends with one), so the client holds part of a frame when the RST comes.
        case resetAfter(bytes: Int)
        /// Forwards until bytes towards the client contain `marker`; passes the marker's first
        /// half and holds everything after it (towards the client) until the mode changes, when the
        /// held bytes go on. Towards the server everything passes.
        case holdInside(marker: String)

        /// The mode in words (`delay 0.3 seconds`).
        public var description: String {
            switch self {
            case .pass: "pass"
            case .delay(let duration): "delay \(duration)"
            case .blackhole: "blackhole"
            case .dropToServer: "drop to server"
            case .dropToClient: "drop to client"
            case .resetAfter(let bytes): "reset inside a frame after \(bytes) bytes"
            case .holdInside(let marker): "hold the rest of the frame after half of \(marker)"
            }
        }

        func drops(towardsServer: Bool) -> Bool {
            switch self {
            case .blackhole: true
            case .dropToServer: towardsServer
            case .dropToClient: !towardsServer
            case .pass, .delay, .resetAfter, .holdInside: false
            }
        }

        var delay: Duration {
            if case .delay(let duration) = self { return duration }
            return .zero
        }
    }

    /// The loopback port clients connect to.
    public let port: Int
    /// The loopback port the proxy connects to.
    public let target: Int
    /// A name for messages (`a→n1`).
    public let name: String
    private let listener: Int32
    private let state = SyncLock(State())

    private struct State {
        var mode = Mode.pass
        var links: [ObjectIdentifier: Link] = [:]
        var closed = false
        var accepted = 0
        var resets = 0
        var cutsInsideFrames = 0
        var holds = 0
    }

    /// Listens on a free loopback port and starts accepting.
    /// - Throws: ``NATSServerProcessError`` when the socket cannot be made.
    public init(name: String, target: Int) throws {
        self.name = name
        self.target = target
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw NATSServerProcessError(message: "proxy \(name): socket failed: errno \(errno)") }
        var yes: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) } }
        guard bound == 0, listen(descriptor, 64) == 0 else {
            close(descriptor)
            throw NATSServerProcessError(message: "proxy \(name): bind or listen failed: errno \(errno)")
        }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = descriptor
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "fault proxy \(name)"
        thread.start()
    }

    deinit {
        close(listener)
    }

    /// `127.0.0.1:<port>`, for a URL.
    public var address: String { "127.0.0.1:\(port)" }

    /// What the proxy does now; setting it applies to the connections open and to come.
    public var mode: Mode {
        get { state.withLock { $0.mode } }
        set {
            let poisoned = state.withLock { state -> [Link] in
                state.mode = newValue
                guard !newValue.drops(towardsServer: true), !newValue.drops(towardsServer: false) else { return [] }
                return state.links.values.filter(\.lostBytes)
            }
            for link in poisoned { link.reset() }
        }
    }

    /// Connections accepted so far.
    public var accepted: Int { state.withLock { $0.accepted } }

    /// Connections open now.
    public var open: Int { state.withLock { $0.links.count } }

    /// Connections reset inside a frame so far (``Mode/resetAfter(bytes:)``).
    public var cutsInsideFrames: Int { state.withLock { $0.cutsInsideFrames } }

    /// Times a connection began holding the rest of a frame (``Mode/holdInside(marker:)``).
    public var holds: Int { state.withLock { $0.holds } }

    /// Resets every open connection (an RST to both ends); new ones are accepted as the mode says.
    public func resetAll() {
        let links = state.withLock { state in
            state.resets += 1
            return Array(state.links.values)
        }
        for link in links { link.reset() }
    }

    /// Stops accepting and resets every connection.
    public func shutdown() {
        state.withLock { $0.closed = true }
        resetAll()
    }

    private var closed: Bool { state.withLock { $0.closed } }

    private func acceptLoop() {
        while !closed {
            var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            if closed {
                close(client)
                break
            }
            let upstream = Self.connectUpstream(target)
            let link = Link(client: client, server: upstream)
            state.withLock {
                $0.accepted += 1
                $0.links[ObjectIdentifier(link)] = link
            }
            for towardsServer in [true, false] {
                let thread = Thread { [self] in
                    link.pump(towardsServer: towardsServer, mode: { self.mode }, note: { note in
                        self.state.withLock { state in
                            switch note {
                            case .cutInsideFrame: state.cutsInsideFrames += 1
                            case .holding: state.holds += 1
                            }
                        }
                    })
                    if link.finished() { state.withLock { _ = $0.links.removeValue(forKey: ObjectIdentifier(link)) } }
                }
                thread.name = "fault proxy \(name) \(towardsServer ? "→" : "←")"
                thread.start()
            }
        }
    }

    /// A blocking connect (on the proxy's thread); -1 when the server does not answer, so the
    /// client side sees the connection closed.
    static func connectUpstream(_ port: Int) -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return -1 }
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(descriptor)
            return -1
        }
        return descriptor
    }

    /// A loopback IPv4 address with `port`.
    public static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}

/// One proxied connection: the client's socket, the server's (-1 when the server did not
/// answer), and what its two pumps share. The pump that ends last closes both sockets (with
/// `SO_LINGER` 0 after a reset, so the ends get an RST), so no descriptor is closed while the
/// other pump may still poll it.
final class Link: Sendable {
    let client: Int32
    let server: Int32
    private let state = SyncLock<(reset: Bool, lostBytes: Bool, ended: Int)>((false, false, 0))

    init(client: Int32, server: Int32) {
        self.client = client
        self.server = server
        for descriptor in [client, server] where descriptor >= 0 {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        }
    }

    /// Whether bytes were dropped on this connection.
    var lostBytes: Bool { state.withLock { $0.lostBytes } }

    private var resetRequested: Bool { state.withLock { $0.reset } }

    /// Asks both pumps to end with an RST.
    func reset() { state.withLock { $0.reset = true } }

    /// A pump ended; true for the second, which closed the sockets.
    func finished() -> Bool {
        let (last, reset) = state.withLock { state -> (Bool, Bool) in
            state.ended += 1
            return (state.ended == 2, state.reset)
        }
        guard last else { return false }
        for descriptor in [client, server] where descriptor >= 0 {
            if reset {
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                _ = setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            }
            close(descriptor)
        }
        return true
    }

    /// What a pump tells its proxy.
    enum Note {
        case cutInsideFrame
        case holding
    }

    /// Moves bytes one way until the connection ends or is reset.
    func pump(towardsServer: Bool, mode: () -> FaultProxy.Mode, note: (Note) -> Void) {
        let source = towardsServer ? client : server
        let destination = towardsServer ? server : client
        guard source >= 0 else { return }
        var queue: [(due: ContinuousClock.Instant, bytes: [UInt8])] = []
        var sentOfHead = 0
        var sourceEnded = false
        var buffer = [UInt8](repeating: 0, count: 65536)
        // `resetAfter`: bytes passed towards the client in that mode; a cut waiting for the queue.
        var carried = 0
        var resetWhenSent = false
        // `holdInside`: the bytes held back while holding.
        var held: [UInt8]?
        while !resetRequested {
            let current = mode()
            let now = ContinuousClock.now
            if let bytes = held, !Self.holds(current) {
                if !bytes.isEmpty { queue.append((now, bytes)) }
                held = nil
            }
            if case .resetAfter = current {} else { carried = 0 }
            if resetWhenSent, queue.isEmpty {
                reset()
                return
            }
            let headDue = queue.first.map { $0.due <= now } ?? false
            if sourceEnded, queue.isEmpty, held == nil, current != .blackhole {
                if destination >= 0 { shutdown(destination, Int32(SHUT_WR)) }
                return
            }
            if destination < 0, current != .blackhole, current != (towardsServer ? .dropToServer : .dropToClient) {
                reset()
                return
            }
            var descriptors: [pollfd] = []
            if !sourceEnded, queue.count < 256 { descriptors.append(pollfd(fd: source, events: Int16(POLLIN), revents: 0)) }
            if headDue, destination >= 0 { descriptors.append(pollfd(fd: destination, events: Int16(POLLOUT), revents: 0)) }
            var timeout: Int32 = 50
            if let head = queue.first, !headDue {
                let wait = now.duration(to: head.due)
                let milliseconds = (Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18) * 1000
                timeout = Int32(max(1, min(50, milliseconds.rounded(.up))))
            }
            guard poll(&descriptors, nfds_t(descriptors.count), timeout) > 0 else { continue }
            for entry in descriptors where entry.revents != 0 {
                if entry.fd == source {
                    let count = recv(source, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                    if count > 0 {
                        // The mode when the bytes came, not when the poll began.
                        let current = mode()
                        let chunk = Array(buffer[0..<count])
                        if current.drops(towardsServer: towardsServer) || destination < 0 {
                            state.withLock { $0.lostBytes = true }
                        } else if resetWhenSent {
                            // Cut: nothing after the cut reaches the client.
                        } else if held != nil {
                            held?.append(contentsOf: chunk)
                        } else if !towardsServer, case .holdInside(let marker) = current,
                                  let index = Self.firstIndex(of: Array(marker.utf8), in: chunk) {
                            let cut = index + max(1, marker.utf8.count / 2)
                            queue.append((ContinuousClock.now, Array(chunk[..<cut])))
                            held = Array(chunk[cut...])
                            note(.holding)
                        } else if !towardsServer, case .resetAfter(let limit) = current, carried + count > limit {
                            // Inside a frame: the last byte passed is not a line end.
                            var cut = max(1, limit - carried)
                            while cut < count, chunk[cut - 1] == UInt8(ascii: "\n") { cut += 1 }
                            if cut < count {
                                queue.append((ContinuousClock.now, Array(chunk[..<cut])))
                                resetWhenSent = true
                                note(.cutInsideFrame)
                            } else {
                                // The chunk ends a frame: the next one is cut after its first byte.
                                carried = limit
                                queue.append((ContinuousClock.now, chunk))
                            }
                        } else {
                            if case .resetAfter = current, !towardsServer { carried += count }
                            queue.append((ContinuousClock.now.advanced(by: current.delay), chunk))
                        }
                    } else if count == 0 {
                        sourceEnded = true
                    } else if errno != EAGAIN && errno != EINTR {
                        reset()
                    }
                } else if !queue.isEmpty {
                    let head = queue[0].bytes
                    let sent = head[sentOfHead...].withUnsafeBytes { send(destination, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                    if sent > 0 {
                        sentOfHead += sent
                        if sentOfHead == head.count {
                            queue.removeFirst()
                            sentOfHead = 0
                        }
                    } else if errno != EAGAIN && errno != EINTR {
                        reset()
                    }
                }
            }
        }
    }

    static func holds(_ mode: FaultProxy.Mode) -> Bool {
        if case .holdInside = mode { return true }
        return false
    }

    /// Where `marker` starts in `bytes`, if it does.
    static func firstIndex(of marker: [UInt8], in bytes: [UInt8]) -> Int? {
        guard !marker.isEmpty, bytes.count >= marker.count else { return nil }
        for start in 0...(bytes.count - marker.count) where bytes[start] == marker[0] {
            if bytes[start..<(start + marker.count)].elementsEqual(marker) { return start }
        }
        return nil
    }
}
