#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension TCPSocket {
    /// Why ``connect(host:port:before:wake:stop:)`` gave up.
    public enum ConnectError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The name did not resolve; the resolver's reason.
        case unresolved(String)
        /// No address took the connection; the last failure (`Connection refused (errno 111)`).
        case failed(SystemError)
        /// The deadline passed first.
        case timedOut
        /// The wake pipe fired and `stop` said to give up.
        case stopped

        /// `the host does not resolve (Name or service not known)`, `Connection refused (errno 111)`.
        public var description: String {
            switch self {
            case .unresolved(let reason): "the host does not resolve (\(reason))"
            case .failed(let error): error.description
            case .timedOut: "the connection was not made in time"
            case .stopped: "stopped"
            }
        }
    }

    /// Resolves `host` (a name or a literal) and connects to the first of its addresses that
    /// takes the connection, before `deadline`, sleeping in `poll` meanwhile. When the wake pipe
    /// (read end `wake`) fires it is drained and `stop` is asked whether to give up. Name
    /// resolution blocks and cannot be interrupted, so only a thread of the caller's own calls
    /// this. The socket is non-blocking and close-on-exec, with Nagle off.
    public static func connect(host: String, port: Int, before deadline: ContinuousClock.Instant, wake: Int32,
                               stop: () -> Bool = { false }) throws(ConnectError) -> TCPSocket {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Platform.streamType
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw .unresolved(status == EAI_SYSTEM ? SystemError.text(errno) : String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(first) }
        var failure = SystemError("no address")
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            entry = current.pointee.ai_next
            guard let address = current.pointee.ai_addr else { continue }
            let socket: TCPSocket
            do throws(SystemError) {
                socket = try open(family: current.pointee.ai_family)
            } catch {
                failure = error
                continue
            }
            var code: Int32 = 0
            while Platform.connect(socket.descriptor, address, current.pointee.ai_addrlen) != 0 {
                code = errno
                if code != EINTR { break }
                code = 0
            }
            if code == EINPROGRESS {
                switch Poll.wait(socket.descriptor, for: Poll.output, wake: wake, deadline: deadline, stop: stop) {
                case .ready:
                    code = socket.pendingError
                case .timedOut:
                    Platform.close(socket.descriptor)
                    throw .timedOut
                case .stopped:
                    Platform.close(socket.descriptor)
                    throw .stopped
                case .failed(let error):
                    code = error.code
                }
            }
            if code == 0 { return socket }
            failure = SystemError(errno: code)
            Platform.close(socket.descriptor)
        }
        throw .failed(failure)
    }

    /// A non-blocking, close-on-exec TCP socket of `family`, with Nagle off.
    static func open(family: Int32) throws(SystemError) -> TCPSocket {
        #if canImport(Glibc)
        let descriptor = socket(family, Platform.streamType | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        #else
        let descriptor = socket(family, Platform.streamType, 0)
        if descriptor >= 0 { Platform.configure(descriptor, nonBlocking: true) }
        #endif
        guard descriptor >= 0 else { throw SystemError(operation: "socket", errno: errno) }
        Platform.tune(descriptor)
        return TCPSocket(descriptor: descriptor)
    }

    /// The outcome of a connect that was in progress: 0, or the `errno` it failed with.
    var pendingError: Int32 {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length) == 0 else { return errno }
        return code
    }
}
