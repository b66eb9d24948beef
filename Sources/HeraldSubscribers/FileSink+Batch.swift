import Herald

extension FileSink {
    /// The most bytes put in one `write(2)`: a large batch goes out in several writes, each of
    /// whole lines.
    static var maxWriteBytes: Int { 1 << 20 }

    /// Archives a mailbox's batch: under ``FileSinkDurability/none`` and
    /// ``FileSinkDurability/batch`` the lines go out together, in as few `write(2)` calls as
    /// rotation and ``maxWriteBytes`` allow; under ``FileSinkDurability/always`` each line is
    /// written and synced on its own, as by ``archive(_:)``.
    ///
    /// When a write of several lines fails it is rolled back whole, and each of its events (and
    /// those after it) is tried again alone, so an event fails exactly when ``archive(_:)``
    /// would have failed it, and the next one retries.
    ///
    /// - Parameter filters: when given, only envelopes whose topic matches one are archived
    ///   (the others count as done).
    /// - Returns: torn last lines repaired while opening, and the indices of the envelopes that
    ///   failed, with why.
    func archive<Batch: RandomAccessCollection<Envelope<any Event>> & Sendable>(batch: Batch, filters: [TopicPattern]?)
        -> (torn: [FileSinkTornLine], failures: [(index: Int, error: any Error)]) where Batch.Index == Int
    {
        var torn: [FileSinkTornLine] = []
        var failures: [(index: Int, error: any Error)] = []
        var retry = batch.startIndex
        if durability != .always {
            retry = state.withLock { state in
                state.phase == .closed ? batch.endIndex : writeTogether(batch, filters: filters, state: &state, torn: &torn, failures: &failures)
            }
            failures.removeAll { $0.index >= retry }
        }
        // One line at a time, the lock taken per line: under `always` a batch is many fsyncs,
        // and the group commit, statistics and the end of a run need not wait for all of them.
        for index in retry..<batch.endIndex {
            let envelope = batch[index]
            if let filters, !filters.contains(where: { $0.matches(envelope.topic) }) { continue }
            let result = state.withLock { state -> Result<FileSinkTornLine?, FileSinkError> in
                if state.phase == .closed { return .success(nil) }
                do throws(FileSinkError) {
                    return .success(try archive(envelope, in: &state))
                } catch {
                    return .failure(error)
                }
            }
            switch result {
            case .success(let report?): torn.append(report)
            case .success(nil): break
            case .failure(let error): failures.append((index, error))
            }
        }
        return (torn, failures)
    }

    /// Encodes the batch's lines into `state.pending` and writes them in runs of whole lines: a
    /// run ends where the file must rotate, or before it would pass ``maxWriteBytes``.
    ///
    /// - Returns: the index of the first event not written (the batch's end when all were);
    ///   the caller tries it and those after it one at a time.
    private func writeTogether<Batch: RandomAccessCollection<Envelope<any Event>> & Sendable>(
        _ batch: Batch, filters: [TopicPattern]?, state: inout State,
        torn: inout [FileSinkTornLine], failures: inout [(index: Int, error: any Error)]
    ) -> Int where Batch.Index == Int {
        if let filters, !batch.contains(where: { envelope in filters.contains { $0.matches(envelope.topic) } }) {
            return batch.endIndex
        }
        do throws(FileSinkError) {
            if let report = try open(&state) { torn.append(report) }
        } catch {
            // Each event tries (and fails, or succeeds) alone, as it would have.
            return batch.startIndex
        }
        guard var file = state.file else { return batch.startIndex }
        state.file = nil
        let rotation = rotation
        state.pending.removeAll(keepingCapacity: state.pending.capacity <= 2 * Self.maxWriteBytes)
        // The unwritten run: state.pending holds its lines, the first being runStart's.
        var (runStart, runLines) = (batch.startIndex, 0)
        var failure: FileSinkError?
        do throws(FileSinkError) {
            for index in batch.indices {
                let envelope = batch[index]
                if let filters, !filters.contains(where: { $0.matches(envelope.topic) }) { continue }
                let lineStart = state.pending.count
                do {
                    try state.encoder.append(envelope, to: &state.pending)
                } catch {
                    failures.append((index, FileSinkError(.encode("\(error)"), path: path)))
                    continue
                }
                let length = state.pending.count - lineStart
                // The same test as for a single line, with the run counted as written.
                let rotates = rotation.map { file.size + lineStart > 0 && file.size + lineStart + length > $0.maxBytes } ?? false
                if lineStart > 0, rotates || lineStart + length > Self.maxWriteBytes {
                    try write(state.pending[..<lineStart], lines: runLines, to: &file, state: &state)
                    state.pending.removeSubrange(..<lineStart)
                    (runStart, runLines) = (index, 0)
                }
                if let rotation, rotates {
                    // A decoded policy skips the initializer's clamping.
                    try file.rotate(keep: max(0, rotation.keep))
                    state.dirty = false
                    state.statistics.rotations += 1
                }
                if runLines == 0 { runStart = index }
                runLines += 1
            }
            if runLines > 0 { try write(state.pending[...], lines: runLines, to: &file, state: &state) }
        } catch {
            failure = error
        }
        state.file = file
        guard let failure else { return batch.endIndex }
        // The failed write was rolled back: its lines, and those after, are tried again alone.
        Self.fail(&state, failure)
        return runStart
    }

    /// One `write(2)` of whole lines, counted.
    private func write(_ bytes: ArraySlice<UInt8>, lines: Int, to file: inout JSONLinesFile,
                       state: inout State) throws(FileSinkError) {
        try file.append(bytes)
        state.dirty = true
        state.statistics.lines += lines
        state.statistics.bytes += bytes.count
    }
}
