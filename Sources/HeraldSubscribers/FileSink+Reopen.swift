import Herald

extension FileSink {
    /// Closes the archive after the lines being written (synced first, unless durability is
    /// `none`), so that the next event opens ``path`` anew: after logrotate moved the file away,
    /// lines go to a new one. Runs on the sink's I/O thread.
    public func reopen() async {
        await io.run { [self] in close(phase: nil) }
    }
}
