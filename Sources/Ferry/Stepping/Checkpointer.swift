import FerrySQLite
import Dispatch
import Foundation
import Synchronization

/// Keeps WAL files small while rows move, so checkpoints never land inside a batch.
///
/// SQLite checkpoints a WAL automatically in the commit that crosses 1000 pages; measured here,
/// that puts 20-40 ms into a 1-2 ms batch (env.md section 5). The checkpointer instead runs
/// `PRAGMA wal_checkpoint(PASSIVE)` from its own connection on its own queue whenever a WAL holds
/// more than `thresholdBytes` (250 pages of 4 KiB by default) that no checkpoint copied yet
/// (`WALBacklog`). A passive checkpoint copies committed frames
/// without taking the write lock, so batches and app writes carry on meanwhile.
///
/// It measures a WAL by the frames it holds, which the writer reports after each commit
/// (`Connection.setWALCommitHook`, `recordCommit(schema:frames:)`), not by the file's size: a file
/// keeps its size when SQLite restarts the log, unless `journal_size_limit` truncates it, and
/// truncating a large file inside a commit is itself a stall.
///
/// SQLite restarts a WAL only when a write transaction begins after a checkpoint copied *every*
/// frame. Batches that follow each other with no gap never leave one: each checkpoint finishes a
/// little behind the writer, and the WAL grows by the whole migration (gigabytes for a table whose
/// index pages every row dirties), its final truncation stalling a step for seconds. So the
/// stepper applies backpressure: before a batch, when a WAL holds more than `limitBytes`, it waits
/// (at most half its budget, on the writer) for a catch-up checkpoint that runs with nothing
/// writing (`relieveBacklog(timeout:)`); steps move nothing until it ends, and the next batch's write
/// transaction restarts the log. The step waits holding the writer: an app write that slipped in
/// while the checkpoint ran would keep the log from restarting, and the next step would wait again
/// (with the app writing every 5 ms, two catch-ups in three ended so; holding the writer, fewer
/// than three in five do, those that outlast the step's wait).
/// The app's writes never leave a gap either when the app writes in a loop (its WAL grew by 350 MB
/// in 2 s of single-row inserts): an app write waits the same way when a WAL holds more than twice
/// `limitBytes` (`FerryDatabase.relieveWALBacklog(on:)`); steps keep it under that while they run.
/// A step whose wait ended in time writes a first batch smaller by the share of its budget it waited
/// (`Stepper.step(on:budget:spent:yielding:)`): ferry-bench's step p99 at 1M rows, one batch per 10 ms
/// step, went from 11.7 to 10.9 ms, the slowest step from 15 to 13 ms.
final class Checkpointer: Sendable {
    private let queue = DispatchQueue(label: "ferry.checkpointer", qos: .utility)
    private let state = Mutex(State())
    private let open: @Sendable () throws(FerryError) -> Connection
    private let prepare: @Sendable (Connection) throws(FerryError) -> Void
    let thresholdBytes: Int
    /// The WAL content in bytes over which a step waits for a checkpoint before writing (backpressure).
    let limitBytes: Int

    private struct State {
        var running = false
        var connection: ConnectionHolder?
        var checkpoints = 0
        var waits = 0
        /// Waits for a catch-up that outlasted their timeout (the write went on meanwhile).
        var waitsTimedOut = 0
        /// Connections opened (each open of an encrypted file pays its key derivation).
        var opens = 0
        /// Checkpoints that failed, and the latest failure.
        var failures = 0
        var lastFailure: FerryError?
        var backgroundEnabled = true
        /// The catch-up checkpoint steps wait for, while it is queued or running.
        var catchUp: DispatchGroup?
        /// Frames in each database's WAL not known to be copied to the database file, by schema
        /// name: the count after the writer's latest commit, or after a checkpoint that copied them.
        var frames: [String: Int] = [:]
        /// Page sizes by schema name, read by the checkpointer's connection (4096 until known).
        var pageSizes: [String: Int] = [:]
        /// The frames no checkpoint copied yet, which start background checkpoints.
        var backlog = WALBacklog()
        /// The log size over which an app write waits for a catch-up (`relieveBacklogBeforeAppWrite`);
        /// nil: twice `limitBytes`.
        var appWriteThreshold: Int?
    }

    /// - Parameters:
    ///   - limitBytes: the WAL content over which `relieveBacklog(timeout:)` waits for a checkpoint.
    ///   - open: opens a connection on the target.
    ///   - prepare: brings the connection's attached sources up to date before each checkpoint.
    init(thresholdBytes: Int = 250 * 4096, limitBytes: Int, open: @escaping @Sendable () throws(FerryError) -> Connection,
         prepare: @escaping @Sendable (Connection) throws(FerryError) -> Void) {
        self.thresholdBytes = thresholdBytes
        self.limitBytes = max(limitBytes, thresholdBytes)
        self.open = open
        self.prepare = prepare
    }

    /// Records what the writer's commit left in a WAL; installed as the writer's WAL commit hook.
    func recordCommit(schema: String, frames: Int) {
        let key = schema.lowercased()
        state.withLock { s in
            s.frames[key] = frames
            s.backlog.recordCommit(schema: key, frames: frames)
            // A log back under the limit (it restarted): app writes wait at twice the limit again.
            if s.appWriteThreshold != nil && frames * (s.pageSizes[key] ?? 4096) < limitBytes { s.appWriteThreshold = nil }
        }
    }

    /// The bytes of the largest WAL backlog (frames not yet checkpointed), from the latest commits
    /// and checkpoints.
    var largestWALBytes: Int { state.withLock { Self.largestWALBytes(in: $0) } }

    /// `largestWALBytes` in `s`, under the state's lock. Asked before every app write: a loop, no
    /// array.
    private static func largestWALBytes(in s: State) -> Int {
        var largest = 0
        for (schema, frames) in s.frames { largest = max(largest, frames * (s.pageSizes[schema] ?? 4096)) }
        return largest
    }

    /// How many checkpoints ran (for tests and benchmarks).
    var checkpointCount: Int { state.withLock { $0.checkpoints } }

    /// How many catch-up checkpoints steps waited for (for tests and benchmarks).
    var backpressureCount: Int { state.withLock { $0.waits } }

    /// How many of those waits outlasted their timeout (a slow or loaded disk): the write went on
    /// before the log was caught up, so the log grew past its bound meanwhile.
    var backpressureTimeouts: Int { state.withLock { $0.waitsTimedOut } }

    /// How many connections the checkpointer opened: one for its whole life unless opening or
    /// preparing one failed (on an encrypted file each open derives the key again: tens of ms).
    var connectionOpenCount: Int { state.withLock { $0.opens } }

    /// How many checkpoints failed, and the latest failure (for tests, benchmarks and diagnostics).
    var failures: (count: Int, latest: FerryError?) { state.withLock { ($0.failures, $0.lastFailure) } }

    /// False to stop background checkpoints (tests use it to stand for a checkpointer that cannot
    /// keep up); backpressure still checkpoints.
    var backgroundCheckpointsEnabled: Bool {
        get { state.withLock { $0.backgroundEnabled } }
        set { state.withLock { $0.backgroundEnabled = newValue } }
    }

    /// Runs `body` on the checkpointer's queue, after any queued checkpoint (tests use it to hold
    /// checkpoints back).
    func enqueue(_ body: @escaping @Sendable () -> Void) { queue.async(execute: body) }

    /// Starts a background checkpoint if a WAL holds more than the threshold of frames no
    /// checkpoint copied yet (`WALBacklog`), and none is running.
    func checkpointIfNeeded() {
        guard state.withLock({ $0.backlog.largestBytes(pageSizes: $0.pageSizes) }) > thresholdBytes else { return }
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

    /// Backpressure, for a step (or an app write) about to write, called on the writer: when a WAL
    /// holds more than `limitBytes` (or `bytes`), makes sure a catch-up checkpoint is queued (after
    /// any running one, on the checkpointer's connection: the app's reads go on meanwhile) and
    /// waits for it at most `timeout` seconds.
    /// - Returns: whether the step may write: under the limit, or once the catch-up finished (the
    ///   step's transaction restarts the log); not while the catch-up still runs (the step should
    ///   write nothing, or the log would never be caught up).
    func relieveBacklog(over bytes: Int? = nil, timeout: Duration) -> BacklogRelief {
        guard let group = catchUp(over: bytes ?? limitBytes) else { return .underLimit }
        if group.wait(timeout: .now() + timeout.seconds) == .success { return .caughtUp }
        state.withLock { $0.waitsTimedOut += 1 }
        return .stillRunning
    }

    /// Backpressure for an app write, on the writer outside a transaction: when a WAL holds more
    /// than twice `limitBytes`, waits (at most `timeout` seconds) for a catch-up checkpoint, so that
    /// the write's transaction restarts the log. A catch-up that left frames uncopied (a reader
    /// holds an old snapshot, or it outlasted the wait) raises the threshold to the log's size plus
    /// the limit: such a reader then costs one wait per limit of log, not one per write (3,000
    /// single-row writes under a pinning reader: 187 µs each with a wait per write, 42-53 µs so,
    /// 44 µs without the reader). The threshold is back at twice the limit once the log restarts.
    func relieveBacklogBeforeAppWrite(timeout: Duration) {
        let (threshold, before) = state.withLock { s in (s.appWriteThreshold ?? 2 * limitBytes, Self.largestWALBytes(in: s)) }
        guard before > threshold else { return }
        _ = relieveBacklog(over: threshold, timeout: timeout)
        // Every frame copied: this write's transaction restarts the log.
        if largestWALBytes > 0 { state.withLock { $0.appWriteThreshold = before + limitBytes } }
    }

    /// How a step's wait for a catch-up checkpoint ended (`relieveBacklog(timeout:)`).
    enum BacklogRelief: Sendable, Equatable {
        /// Every WAL is under the limit: the step writes at once.
        case underLimit
        /// The step waited, and the catch-up checkpoint finished: the step may write.
        case caughtUp
        /// The catch-up still runs after the timeout: the step writes nothing.
        case stillRunning
    }

    /// The running catch-up checkpoint, started if a WAL holds more than `bytes` and none runs;
    /// nil under that.
    private func catchUp(over bytes: Int) -> DispatchGroup? {
        guard anyWAL(over: bytes) else { return nil }
        let (group, start) = state.withLock { s -> (DispatchGroup, Bool) in
            if let group = s.catchUp { return (group, false) }
            let group = DispatchGroup()
            group.enter()
            s.catchUp = group
            s.waits += 1
            return (group, true)
        }
        if start {
            queue.async { [self] in
                checkpoint()
                state.withLock { $0.catchUp = nil }
                group.leave()
            }
        }
        return group
    }

    private func anyWAL(over bytes: Int) -> Bool { largestWALBytes > bytes }

    /// One passive checkpoint of every attached database; on the checkpointer's queue only.
    ///
    /// The connection is kept across checkpoints and across a failed checkpoint: only a failure to
    /// open it or to bring its attached sources up to date drops it (the next checkpoint opens a new
    /// one). Dropping it after any failure made a failure that repeats (a pragma's answer it could
    /// not read) cost a key derivation per checkpoint on an encrypted file, and no checkpoint ever
    /// completed. A failed checkpoint loses nothing: the next one copies the same frames.
    private func checkpoint() {
        let holder: ConnectionHolder
        do {
            holder = try connectionForCheckpoint()
        } catch {
            recordFailure(error, droppingConnection: true)
            return
        }
        do {
            let restartsBefore = state.withLock { $0.backlog.restartCounts }
            // Every attached database: the target and the sources. Each reports the frames in
            // its log and how many of them are now in the database file.
            var results: [(schema: String, log: Int, copied: Int)] = []
            var pageSizes: [String: Int] = [:]
            for row in try sqlite(holder.connection.fetchAll("PRAGMA database_list")) {
                let schema: String = try sqlite(row.column(1))
                guard schema != "temp" else { continue }
                let result = try sqlite(holder.connection.fetchAll("PRAGMA \(q(schema)).wal_checkpoint(PASSIVE)"))
                if let result = result.first { results.append((schema.lowercased(), try sqlite(result.column(1)), try sqlite(result.column(2)))) }
                pageSizes[schema.lowercased()] = try sqlite(holder.connection.pageSize(schema: schema))
            }
            state.withLock { s in
                s.checkpoints += 1
                s.pageSizes = pageSizes
                // Detached databases are no longer written; a log whose frames are all copied
                // holds no backlog (unless the writer committed since: then its count is newer).
                s.frames = s.frames.filter { pageSizes[$0.key] != nil }
                for result in results where result.log >= 0 && s.frames[result.schema] == result.log {
                    s.frames[result.schema] = result.log - result.copied
                }
                for result in results where result.log >= 0 {
                    s.backlog.apply(schema: result.schema, copiedFrames: result.copied, restartsBefore: restartsBefore)
                }
                s.backlog.keep(only: Set(pageSizes.keys))
            }
        } catch {
            recordFailure(error, droppingConnection: false)
        }
    }

    /// The checkpointer's connection, opened if it has none, with its attached sources brought up
    /// to date.
    private func connectionForCheckpoint() throws(FerryError) -> ConnectionHolder {
        let holder: ConnectionHolder
        if let kept = state.withLock({ $0.connection }) {
            holder = kept
        } else {
            holder = ConnectionHolder(try open())
            state.withLock { s in
                s.connection = holder
                s.opens += 1
            }
        }
        try prepare(holder.connection)
        return holder
    }

    /// Counts a failed checkpoint; drops the connection when the failure was opening or preparing it.
    private func recordFailure(_ error: FerryError, droppingConnection: Bool) {
        let dropped = state.withLock { s -> ConnectionHolder? in
            s.failures += 1
            s.lastFailure = error
            guard droppingConnection else { return nil }
            defer { s.connection = nil }
            return s.connection
        }
        dropped?.connection.close()
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

