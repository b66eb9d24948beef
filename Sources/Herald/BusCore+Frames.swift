/// Dispatch frames: a publish from inside a handler's delivery joins the frame of that delivery.
extension BusCore {
    /// The dispatch frame this task opened on this bus, if any.
    @usableFromInline
    func currentFrame() -> DispatchFrame? {
        DispatchFrame.find(for: self)
    }

    /// Runs `body` with a dispatch frame open, then delivers what handlers published meanwhile.
    @usableFromInline
    func inFrame(_ body: () -> Int?) -> Int? {
        openFrames.wrappingAdd(1, ordering: .relaxed)
        defer { openFrames.wrappingSubtract(1, ordering: .relaxed) }
        let frame = DispatchFrame(core: self)
        return DispatchFrame.$current.withValue(frame) {
            let result = body()
            frame.runDeferred()
            return result
        }
    }

    /// The same for an asynchronous delivery.
    @usableFromInline
    func inFrame(_ body: () async -> Void) async {
        openFrames.wrappingAdd(1, ordering: .relaxed)
        defer { openFrames.wrappingSubtract(1, ordering: .relaxed) }
        let frame = DispatchFrame(core: self)
        await DispatchFrame.$current.withValue(frame) {
            await body()
            frame.runDeferred()
        }
    }
}
