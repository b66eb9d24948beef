import HeraldIO

/// Wakes a stream's ``HTTPStreamConnection/wait(for:timeout:)`` from any thread, without ever
/// blocking the caller: a non-blocking pipe whose write end takes one byte per wake-up (a full
/// pipe already means "wake up").
///
/// `Sendable`: its two descriptors are fixed at creation and closed only in `deinit`.
public final class HTTPStreamNotifier: Sendable {
    let readEnd: Int32
    private let writeEnd: Int32

    /// A notifier.
    ///
    /// - Throws: ``HTTPServerError`` when the process has no descriptor left for its pipe.
    public init() throws(HTTPServerError) {
        let pipe: WakePipe
        do throws(SystemError) {
            pipe = try WakePipe()
        } catch {
            throw HTTPServerError(operation: "pipe", code: error.code)
        }
        readEnd = pipe.readEnd
        writeEnd = pipe.writeEnd
    }

    deinit {
        WakePipe(readEnd: readEnd, writeEnd: writeEnd).close()
    }

    /// Wakes the waiting stream (now, or at its next wait). Never blocks.
    public func notify() {
        WakePipe.signal(writeEnd)
    }

    /// Empties the pipe, so the next wait sleeps until the next ``notify()``.
    func consume() {
        WakePipe.drain(readEnd)
    }
}
