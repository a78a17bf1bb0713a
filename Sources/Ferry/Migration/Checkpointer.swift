import Dispatch
import Foundation
import Synchronization

/// Keeps WAL files small while rows move, so checkpoints never land inside a batch.
///
/// SQLite checkpoints a WAL automatically in the commit that crosses 1000 pages; measured here,
/// that puts 20-40 ms into a 1-2 ms batch (env.md section 5). The checkpointer instead runs
/// `PRAGMA wal_checkpoint(PASSIVE)` from its own connection on its own queue whenever a WAL passes
/// `thresholdBytes` (250 pages of 4 KiB by default). A passive checkpoint copies committed frames
/// without taking the write lock, so batches and app writes carry on meanwhile.
///
/// A WAL file keeps its size after a checkpoint (SQLite rewrites it from the start), so Ferry's
/// connections set `journal_size_limit` to half the threshold: the next write after a complete
/// checkpoint truncates the file, and its size measures the WAL's content again.
///
/// SQLite restarts a WAL only when a write transaction begins after a checkpoint copied *every*
/// frame. Batches that follow each other with no gap never leave one: each checkpoint finishes a
/// little behind the writer, and the WAL grows by the whole migration (gigabytes for a table whose
/// index pages every row dirties), its final truncation stalling a step for seconds. So the
/// stepper applies backpressure: before a batch, when a watched WAL is over `limitBytes`, it waits
/// for a checkpoint that runs with no batch writing (`relieveBacklog()`), and the batch's write
/// transaction then restarts the log.
final class Checkpointer: Sendable {
    private let queue = DispatchQueue(label: "ferry.checkpointer", qos: .utility)
    private let state = Mutex(State())
    private let open: @Sendable () throws -> Connection
    private let walFiles: @Sendable () -> [String]
    let thresholdBytes: Int
    /// The WAL size over which a step waits for a checkpoint before writing (backpressure).
    let limitBytes: Int

    private struct State {
        var running = false
        var connection: ConnectionHolder?
        var checkpoints = 0
        var waits = 0
        var backgroundEnabled = true
    }

    /// - Parameters:
    ///   - open: opens a connection on the target with every source attached.
    ///   - walFiles: the WAL files to watch (target and attached sources).
    ///   - limitBytes: the WAL size over which `relieveBacklog()` waits for a checkpoint.
    init(thresholdBytes: Int = 250 * 4096, limitBytes: Int, open: @escaping @Sendable () throws -> Connection,
         walFiles: @escaping @Sendable () -> [String]) {
        self.thresholdBytes = thresholdBytes
        self.limitBytes = max(limitBytes, thresholdBytes)
        self.open = open
        self.walFiles = walFiles
    }

    /// How many checkpoints ran (for tests and benchmarks).
    var checkpointCount: Int { state.withLock { $0.checkpoints } }

    /// How many times a step waited for a checkpoint (for tests and benchmarks).
    var backpressureCount: Int { state.withLock { $0.waits } }

    /// False to stop background checkpoints (tests use it to stand for a checkpointer that cannot
    /// keep up); backpressure still checkpoints.
    var backgroundCheckpointsEnabled: Bool {
        get { state.withLock { $0.backgroundEnabled } }
        set { state.withLock { $0.backgroundEnabled = newValue } }
    }

    /// Starts a background checkpoint if a watched WAL is over the threshold and none is running.
    func checkpointIfNeeded() {
        guard anyWAL(over: thresholdBytes) else { return }
        let start = state.withLock { s -> Bool in
            guard !s.running && s.backgroundEnabled else { return false }
            s.running = true
            return true
        }
        guard start else { return }
        queue.async { [self] in
            defer { state.withLock { $0.running = false } }
            checkpoint()
        }
    }

    /// Backpressure, for a step about to write: when a watched WAL is over `limitBytes`, waits for
    /// any running checkpoint and then runs one more (on the checkpointer's connection, so the app's
    /// writes carry on), letting the step's transaction restart the log. Returns at once otherwise.
    func relieveBacklog() {
        guard anyWAL(over: limitBytes) else { return }
        state.withLock { $0.waits += 1 }
        queue.sync { checkpoint() }
    }

    /// Async form of `relieveBacklog()`: suspends instead of blocking a thread.
    func relieveBacklog() async {
        guard anyWAL(over: limitBytes) else { return }
        state.withLock { $0.waits += 1 }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { [self] in
                checkpoint()
                continuation.resume()
            }
        }
    }

    private func anyWAL(over bytes: Int) -> Bool {
        walFiles().contains { path in
            var info = stat()
            return stat(path, &info) == 0 && Int(info.st_size) > bytes
        }
    }

    /// One passive checkpoint of every attached database; on the checkpointer's queue only.
    private func checkpoint() {
        do {
            let holder = try state.withLock { s -> ConnectionHolder? in s.connection } ?? ConnectionHolder(try open())
            state.withLock { $0.connection = holder }
            // Every attached database: the target and the sources.
            try holder.connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
            state.withLock { $0.checkpoints += 1 }
        } catch {
            // A failed checkpoint loses nothing: the next one copies the same frames.
            state.withLock { $0.connection = nil }
        }
    }

    /// Closes the checkpointer's connection after any running checkpoint.
    func close() {
        queue.sync {
            let holder = state.withLock { s -> ConnectionHolder? in
                defer { s.connection = nil }
                return s.connection
            }
            holder?.connection.close()
        }
    }
}

/// A connection used only on the checkpointer's serial queue.
final class ConnectionHolder: @unchecked Sendable {
    let connection: Connection
    init(_ connection: Connection) { self.connection = connection }
}
