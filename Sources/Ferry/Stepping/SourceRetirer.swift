import Dispatch
import Foundation
import FerrySQLite
import Synchronization

/// Retires a source table of its own file (every row of which moved) on a connection of its own,
/// so that the writer is not held while SQLite frees the table's pages.
///
/// `DROP TABLE` reads every page of the table it frees: 50-70 ms for a million rows here, half a
/// second for ten million, in one statement that no budget can cut. On the writer it held the app's
/// writes for that long. The retirer runs it in a transaction of the source file alone (its
/// connection attaches the sources as the writer does), while the writer, whose app writes never
/// write a source file, goes on; the step that started it waits for it at most its budget (until
/// it ends, with fixed batches, so tests stay deterministic), and a later step marks the source
/// cleaned, exactly as after a drop whose mark did not commit.
///
/// Cleanup leaves the file alone while one of its tables is being retired. A step moving another
/// table of the same file goes on: a move locks main alone (`Stepper.runChunks`). A failed
/// retirement changes nothing (its transaction rolls back) and is reported by the step that
/// collects it; the next step tries again.
final class SourceRetirer: Sendable {
    /// What became of a retirement.
    enum Outcome: Sendable {
        /// The table was dropped (or emptied, when source tables are kept) holding this many rows.
        case retired(rows: Int)
        /// A row lies above the cursor (the source was written behind Ferry's back): nothing changed.
        case declined
        /// It failed: nothing changed.
        case failed(FerryError)
    }

    /// One retirement.
    struct Job: Sendable {
        /// The source's schema on Ferry's connections (`ferry_src_N`).
        let schema: String
        /// What it runs.
        let retirement: SourceTableRetirement
        /// The rows the table holds (reported once it is retired).
        let rows: Int
    }

    private struct State {
        /// Jobs by target key: running (no outcome yet), or ended.
        var jobs: [String: (job: Job, outcome: Outcome?, done: DispatchGroup)] = [:]
    }

    private let queue = DispatchQueue(label: "ferry.retirer", qos: .utility)
    private let state = Mutex(State())
    private let open: @Sendable () throws -> Connection
    private let prepare: @Sendable (Connection) throws -> Void

    /// - Parameters:
    ///   - open: opens a connection on the target.
    ///   - prepare: attaches the sources (under the writer's schema names) before each job.
    init(open: @escaping @Sendable () throws -> Connection, prepare: @escaping @Sendable (Connection) throws -> Void) {
        self.open = open
        self.prepare = prepare
    }

    /// True while a job for `key` runs, or ended without being collected.
    func hasJob(for key: String) -> Bool { state.withLock { $0.jobs[key] != nil } }

    /// True while a job runs on `schema` (the stepper then leaves that file alone).
    func isRetiring(schema: String) -> Bool {
        state.withLock { s in s.jobs.values.contains { $0.job.schema == schema && $0.outcome == nil } }
    }

    /// Starts `job` for `key` (unless one is there already).
    func start(_ job: Job, for key: String) {
        let group = DispatchGroup()
        let started = state.withLock { s -> Bool in
            guard s.jobs[key] == nil else { return false }
            group.enter()
            s.jobs[key] = (job, nil, group)
            return true
        }
        guard started else { return }
        queue.async { [self] in
            let outcome = run(job)
            state.withLock { $0.jobs[key]?.outcome = outcome }
            group.leave()
        }
    }

    /// Waits for the job of `key` at most `timeout` seconds (nil: until it ends), and returns its
    /// outcome once it ended (forgetting the job); nil while it runs.
    func collect(_ key: String, waiting timeout: Duration?) -> Outcome? {
        guard let group = state.withLock({ $0.jobs[key]?.done }) else { return nil }
        if let timeout { _ = group.wait(timeout: .now() + timeout.seconds) } else { group.wait() }
        return state.withLock { s -> Outcome? in
            guard let outcome = s.jobs[key]?.outcome else { return nil }
            s.jobs[key] = nil
            return outcome
        }
    }

    /// Runs `body` on the retirer's queue, after any queued job (tests use it to hold jobs back).
    func enqueue(_ body: @escaping @Sendable () -> Void) { queue.async(execute: body) }

    /// Waits until no job runs (their outcomes stay to be collected); also what closing the
    /// database waits for.
    func waitUntilIdle() { queue.sync {} }

    /// Forgets the outcomes of ended jobs no step collected (the database was erased: the
    /// catalog they would be recorded in is gone). Call it when no job runs (`waitUntilIdle()`).
    func forgetOutcomes() {
        state.withLock { s in s.jobs = s.jobs.filter { $0.value.outcome == nil } }
    }

    /// How long a retirement tries again while another connection holds the source file's write
    /// lock (SQLite's busy handler does not wait for a transaction that read first).
    static let busyPatience = Duration.seconds(10)

    /// Runs `job` in one transaction of the source file, on a connection opened for it (retirements
    /// are rare; the pages the drop read leave with the connection); on the retirer's queue only.
    ///
    /// The transaction reads the source (the cursor check) before it drops: SQLite then answers
    /// `SQLITE_BUSY` at once, without waiting, when another connection holds the file's write lock
    /// (a step's cleanup of another table, a checkpoint's catch-up, an app's tool). That is a
    /// moment's contention, not a failure: the transaction rolls back and runs again, with growing
    /// pauses, for up to `busyPatience`.
    private func run(_ job: Job) -> Outcome {
        do {
            let db = try open()
            defer { db.close() }
            // Attaches the sources with the small cache of a connection that writes
            // (`MigrationEngine.writingSourceCacheSize`): the drop reads each page once.
            try prepare(db)
            // Ferry's own drop, as on the writer (`Stepper.withoutForeignKeys`): dropping a parent
            // table must not delete, nor check, the rows of the source's other tables.
            try db.execute("PRAGMA foreign_keys = OFF")
            let deadline = ContinuousClock.now + Self.busyPatience
            var pause = Duration.milliseconds(2)
            while true {
                do {
                    // Deferred: the statements below lock the source file alone, never the target.
                    return try db.transaction(.deferred) { () throws -> Outcome in
                        try job.retirement.run(on: db) ? .retired(rows: job.rows) : .declined
                    }
                } catch {
                    guard Self.outcome(of: error).resultCode?.primary == .busy, ContinuousClock.now + pause < deadline else { throw error }
                    Thread.sleep(forTimeInterval: pause.seconds)
                    pause = min(pause * 2, .milliseconds(200))
                }
            }
        } catch {
            return .failed(Self.outcome(of: error))
        }
    }

    /// Any error as Ferry's.
    private static func outcome(of error: any Error) -> FerryError {
        (error as? FerryError) ?? (error as? SQLiteError).map(FerryError.init) ?? .unsupported("retiring a source table failed: \(error)")
    }
}

extension SourceRetirer: SourceSchemaBarrier {
    /// A retirement drops a source table off the writer: the engine waits for it before it reads
    /// the sources' schemas.
    func waitUntilNoSchemaChanges() { waitUntilIdle() }
}
