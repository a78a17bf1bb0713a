#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// Counts the virtual-machine instructions a connection runs, in units of `granularity`: a
/// deterministic measure of work, independent of the machine's speed. Tests use it to prove that
/// an algorithm stays linear (for example, that a filtered migration never rescans rows).
final class VMStepCounter: @unchecked Sendable {
    // Only touched on the connection's thread, from SQLite's progress callback.
    private(set) var ticks = 0
    /// Instructions per tick.
    let granularity: Int32

    init(granularity: Int32 = 100) { self.granularity = granularity }
    fileprivate func tick() { ticks += 1 }
}

extension Connection {
    /// Installs `counter` as the connection's progress handler (nil removes it). The connection
    /// keeps the counter alive while installed.
    func setVMStepCounter(_ counter: VMStepCounter?) {
        guard let handle else { return }
        vmStepCounter = counter
        guard let counter else { sqlite3_progress_handler(handle, 0, nil, nil); return }
        sqlite3_progress_handler(handle, counter.granularity, { context in
            Unmanaged<VMStepCounter>.fromOpaque(context!).takeUnretainedValue().tick()
            return 0
        }, Unmanaged.passUnretained(counter).toOpaque())
    }
}
