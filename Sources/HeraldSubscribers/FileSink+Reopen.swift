import Herald

extension FileSink {
    /// Closes the archive after the lines being written (synced first, unless durability is
    /// `none`), so that the next event opens ``path`` anew: after logrotate moved the file away,
    /// lines go to a new one. Runs on the sink's I/O thread.
    public func reopen() async {
        let durability = durability
        await io.run { [self] in
            state.withLock { state in
                if durability != .none { Self.syncIfDirty(&state) }
                state.file?.close()
                state.file = nil
            }
        }
    }

    /// Ends the subscription after writing what waits in its mailbox, then syncs and closes the
    /// file (``finish()``): what a reload that replaces or removes the sink uses, so that no event
    /// it accepted is lost.
    public func drainAndFinish() async {
        let token = subscription.withLock { $0 }
        await token?.drain()
        await finish()
    }
}
