import FerrySQLite
import Synchronization
import Foundation

/// A database whose tables may be fed by online data migrations.
///
/// Open the target database, register a plan (persisted in the database, idempotent), then move
/// rows with `step()`, `migrateAll()` or background auto-migration, and watch `events()`.
///
/// ```swift
/// let db = try FerryDatabase(path: "app.db", plan: plan)
/// db.startAutoMigration()
/// for await event in db.events() { if case .allFinished = event { break } }
/// ```
public final class FerryDatabase: Sendable {
    /// Options of the migration engine.
    public struct Options: Sendable {
        /// Keep source tables when they are empty (default: drop them).
        public var keepSourceTables: Bool
        /// The time budget of a manual `step()`. Default 10 ms.
        public var stepBudget: Duration
        /// The largest number of concurrent readers. Default 4.
        ///
        /// Zero: single-connection mode, for tests and small apps. No reader connection opens:
        /// `read { }` (and `observe`, `progress`, `verify`) run on the writer, one at a time with
        /// `write { }` and the steps, in a transaction that sees the writer's committed state and
        /// writes nothing (a statement that would write throws `FerryError.sqlite` with code
        /// `.readonly`, as on a reader). A `read { }` inside a `write { }` then throws
        /// `FerryError.misuse`: read with the write's handle. Ferry's background work keeps its
        /// own connections (the checkpointer, the retirement of a source file's tables). An
        /// in-memory target (`:memory:`) always works this way. Negative: `invalidArguments`.
        public var maximumReaderCount: Int
        /// The WAL content in bytes (frames not yet checkpointed, in the target's or a source's WAL)
        /// over which the next step waits for a checkpoint before it writes, so the log restarts
        /// instead of growing by the whole migration; also the `journal_size_limit` of those files.
        /// The wait (at most half the step's budget) counts in that step's budget: a step that
        /// waited and then writes moves a first batch smaller by what it waited. The app's reads go
        /// on meanwhile; its writes wait for the step's wait as for a batch. An app write waits the
        /// same way (at most 250 ms, usually a few milliseconds) when the log holds more than twice
        /// the limit: an app that writes without a pause would otherwise never let the log
        /// restart, migrating or not. A larger limit means fewer waits and more disk. Default 64 MiB.
        public var walSizeLimit: Int
        /// Rows per batch and per cleanup chunk, fixed instead of adapted to the time budget
        /// (tests use it to make the work of a scenario deterministic, the micro-benchmarks to time a
        /// step of a known size). Default nil: adaptive. SPI, not API (`@_spi(Benchmarks) import Ferry`).
        @_spi(Benchmarks) public var fixedBatchRows: Int?
        /// How long one step may go on moving rows while no app write waits for the writer: batch
        /// after batch, each within the step's budget, in one transaction, which commits as soon as
        /// an app write waits (it then waits for one batch and the commit at most). The batches share
        /// one commit, and the pages they all touch are written once: with nobody waiting, a step
        /// moves several times the rows per second. nil: one batch per step. Default 250 ms. (With
        /// `fixedBatchRows`, one batch per step.)
        public var yieldingStepLimit: Duration?
        /// How often each of the app's connections checks that the source files it has attached are
        /// still the ones at their paths (not deleted, renamed, or replaced by another file): one
        /// `stat` per file, at the first `read { }` or `write { }` after the interval. Between
        /// checks a connection reads the file it has open, which holds the rows it held (a migrating
        /// source is read-only); a file found gone makes the statements that need it fail with
        /// `FerryError.sourceUnavailable`. Steps and cleanup check at every use. Zero: every
        /// `read { }` and `write { }` checks. Default 10 ms.
        public var sourceFileCheckInterval: Duration

        /// Options with the defaults above.
        public init(keepSourceTables: Bool = false, stepBudget: Duration = .milliseconds(10), maximumReaderCount: Int = 4,
                    walSizeLimit: Int = 64 << 20, yieldingStepLimit: Duration? = .milliseconds(250),
                    sourceFileCheckInterval: Duration = .milliseconds(10)) {
            self.keepSourceTables = keepSourceTables
            self.stepBudget = stepBudget
            self.maximumReaderCount = maximumReaderCount
            self.walSizeLimit = walSizeLimit
            self.yieldingStepLimit = yieldingStepLimit
            self.sourceFileCheckInterval = sourceFileCheckInterval
        }
    }

    /// The target database path.
    public let path: String
    /// True when the target is read-only (a read-only configuration, or a file SQLite could only
    /// open read-only): steps and registrations are refused up front.
    public let isReadOnly: Bool
    private let options: Options
    /// The exclusive lock that makes this instance the target's only owner (nil for in-memory,
    /// URI and read-only targets).
    private let ownership: OwnershipLock?
    /// The writer and the readers; every connection attaches the sources and carries the access policy.
    let pool: DatabasePool
    /// The mappings resolved against the live schemas, with the sources they attach.
    let engine: MigrationEngine
    /// The app's door: redirector, redirect triggers, the app's `changes()`.
    let access: AppAccess
    /// Steps, auto-migration, backpressure, rates and failures.
    let runner: MigrationRunner
    /// Where events go.
    let hub = EventHub()
    /// The app's edits of moved rows, until a step writes them (`verify` leaves them out).
    let appEdits = AppEditLog()
    /// Tells the observed queries that the app committed (`observe`).
    let commits = CommitSignal()
    /// How many times observed queries ran (for tests).
    let observationRuns = Atomic<Int>(0)
    /// Drops source tables of their own file off the writer.
    let retirer: SourceRetirer
    /// Read locks held on the migrating source files (see `SourceReadPins`).
    let sourcePins: SourceReadPins

    /// The background checkpointer (tests tune it).
    var checkpointer: Checkpointer { runner.checkpointer }

    /// Opens the target database, loads the registered migration, repairs what a crash may have
    /// left, and registers `plan` when given (idempotent).
    ///
    /// Registered encrypted sources need their cipher: pass the plan again at every launch.
    ///
    /// One instance at a time owns a target file and its migrations: it holds an exclusive lock on
    /// `<path>-ferry.lock` until `close()` (or until its process ends). Opening the same target
    /// elsewhere meanwhile, in another process or in this one, waits up to the configuration's
    /// `busyTimeout`, then fails. A read-only configuration takes no lock.
    /// - Throws: `FerryError.invalidArguments` for a path holding a NUL byte; connection errors,
    ///   `FerryError.migrationOwnedByAnotherProcess` while another
    ///   instance has the target open, `FerryError.missingSourceKey`,
    ///   `FerryError.sourceUnavailable` for a missing or unreadable source that feeds an unfinished
    ///   table, and the errors of `register(_:)`.
    public init(path: String, configuration: DatabaseConfiguration = .init(), plan: MigrationPlan? = nil,
                options: Options = .init()) throws(FerryError) {
        // SQLite reads a path up to its first NUL: another file than the one named would open.
        guard !path.utf8.contains(0) else {
            throw .invalidArguments("the database path holds a NUL byte: \(path.debugDescription)")
        }
        guard options.maximumReaderCount >= 0 else {
            throw .invalidArguments("maximumReaderCount is \(options.maximumReaderCount): at least 1, or 0 to read on the writer")
        }
        self.path = path
        self.options = options
        let isFile = !(path.isEmpty || path == ":memory:" || path.hasPrefix("file:"))
        self.ownership = isFile && !configuration.readOnly
            ? try OwnershipLock(target: path, timeout: configuration.busyTimeout) : nil
        // The engine's parts: the published catalog, and the attacher every connection prepares
        // with (the retirer's too, which the engine waits for before it reads source schemas).
        let catalog = PublishedCatalog()
        let attacher = SourceAttacher(paths: SourcePaths(targetPath: path), ciphers: SourceCiphers(), catalog: catalog,
                                      journalSizeLimit: options.walSizeLimit)
        if let plan { attacher.ciphers.supply(from: plan) }
        var configuration = configuration
        // Statement journals (savepoints inside batches) stay in memory instead of temp files.
        configuration.prepareStatements.insert("PRAGMA temp_store = MEMORY", at: 0)
        configuration.prepareStatements.append("PRAGMA main.journal_size_limit = \(options.walSizeLimit)")
        configuration.prepareStatements.append("PRAGMA main.cache_size = \(MigrationEngine.cacheSize)")
        // No checkpoint inside a commit (a 20-40 ms spike on a 1-2 ms batch): the background
        // checkpointer runs them from its own connection after steps and app writes.
        configuration.prepareStatements.append("PRAGMA wal_autocheckpoint = 0")
        // The temp tables of the write path, once per connection.
        configuration.prepareStatements.append(MigratingTableSQL.temporaryTablesSQL)
        let sharedConfiguration = configuration
        let retirer = SourceRetirer(open: {
            var retirerConfiguration = sharedConfiguration
            retirerConfiguration.journalMode = .keep
            return try Connection(path: path, configuration: retirerConfiguration)
        }, prepare: { db in try attacher.attachSources(on: db) })
        self.retirer = retirer
        let engine = MigrationEngine(targetPath: path, keepsSourceTables: options.keepSourceTables, journalSizeLimit: options.walSizeLimit,
                                     catalog: catalog, attacher: attacher, schemaBarrier: retirer)
        self.engine = engine
        let access = AppAccess(engine: engine)
        self.access = access
        let pins = SourceReadPins(engine: engine)
        self.sourcePins = pins
        let policy = AccessPolicy(targetPath: path, sourcePaths: { attacher.sourceFilePaths },
                                  migratingTables: { Set(engine.migratingMappings.map { $0.targetName.lowercased() }) },
                                  sameFileSources: {
                                      Set(engine.migratingMappings.filter { $0.source.path == nil }.map { $0.sourceShape.name.lowercased() })
                                  })
        self.pool = try sqlite(DatabasePool(path: path, configuration: configuration, maximumReaderCount: options.maximumReaderCount,
                                     readsOnWriter: options.maximumReaderCount == 0, prepareForUse: { [interval = options.sourceFileCheckInterval] db in
                                         if !db.hasAuthorizer {  // once per connection
                                             policy.install(on: db)
                                             try MigratingTableSQL.defineInsertProbe(on: db)
                                             try access.defineTriggerMoves(on: db)
                                             try access.defineTriggerRun(on: db)
                                         }
                                         try attacher.attachSources(on: db, checkingFilesAfter: interval)
                                         pins.refresh()
                                     }))
        let checkpointer = Checkpointer(limitBytes: options.walSizeLimit, open: { () throws(FerryError) in
            var checkpointConfiguration = sharedConfiguration
            checkpointConfiguration.journalMode = .keep
            return try sqlite(Connection(path: path, configuration: checkpointConfiguration))
        }, prepare: { db throws(FerryError) in try attacher.attachSources(on: db) })
        self.runner = MigrationRunner(engine: engine, hub: hub, checkpointer: checkpointer, retirer: retirer, fixedBatchRows: options.fixedBatchRows,
                                      yieldingLimit: options.yieldingStepLimit, contention: WriterContention(waiting: { [pool] in pool.writesWaiting }))
        do {
            self.isReadOnly = try pool.writeWithoutTransaction { db throws(FerryError) in
                db.setWALCommitHook { schema, frames in checkpointer.recordCommit(schema: schema, frames: frames) }
                try sqlite(db.execute("PRAGMA main.cache_size = \(MigrationEngine.writerCacheSize)"))
                let readOnly = try sqlite(db.isReadOnly())
                try engine.load(on: db)
                if let plan {
                    try Self.refuseFileSources(of: plan, path: path)
                    if readOnly {
                        try Self.requireRegistered(plan, engine: engine, path: path)
                    } else {
                        try engine.register(plan, on: db)
                    }
                }
                return readOnly
            }
        } catch {
            pool.close()
            ownership?.release()
            throw error
        }
    }

    /// The error of a write a read-only target refuses (SQLite's `SQLITE_READONLY` code, as for the
    /// app's own writes).
    private static func readOnlyError(_ path: String, _ what: String) -> FerryError {
        .sqlite(code: .readonly, message: "\(path) is open read-only (read-only configuration or file permissions): \(what)", sql: nil)
    }

    /// True for a target that lives and dies with its connection: in memory (`:memory:`, a
    /// `mode=memory` URI) or SQLite's private temporary file (an empty path).
    static func isEphemeral(_ path: String) -> Bool {
        path.isEmpty || path == ":memory:" || path.hasPrefix("file::memory:") || (path.hasPrefix("file:") && path.contains("mode=memory"))
    }

    /// An ephemeral target migrates source tables of its own only: the cleanup of a source file
    /// deletes the rows it moved, whose only copy would then be in a database that ends with the
    /// process (so does the migration's state, which no later launch could resume).
    private static func refuseFileSources(of plan: MigrationPlan, path: String) throws(FerryError) {
        guard isEphemeral(path), let file = plan.sources.lazy.compactMap({ source -> String? in
            if case .file(let file) = source.location { return file } else { return nil }
        }).first else { return }
        throw .unsupported("an in-memory or temporary target (\(path.isEmpty ? "empty path" : path)) cannot take rows from the source file \(file): cleanup would delete them from the file while their only copy ends with the process; migrate into a database file, or within the target (MigrationSourceLocation.targetFile)")
    }

    /// On a read-only target a plan can only be one already registered (nothing to write).
    private static func requireRegistered(_ plan: MigrationPlan, engine: MigrationEngine, path: String) throws(FerryError) {
        let registered = Set(engine.allRecords.map { $0.target.lowercased() })
        for (_, mapping) in plan.mappings where !registered.contains(engine.currentName(ofRegistered: mapping.target).lowercased()) {
            throw readOnlyError(path, "cannot register the migration of \(mapping.target)")
        }
    }

    deinit { close() }

    /// Stops auto-migration and closes every connection.
    public func close() {
        runner.stopAuto()
        if !isReadOnly { try? pool.writeWithoutTransaction { db throws(FerryError) in try appEdits.persist(on: db) } }
        retirer.waitUntilIdle()
        checkpointer.close()
        sourcePins.close()
        pool.close()
        ownership?.release()
        hub.finish()
        commits.finish()
    }

    // MARK: Plan

    /// Validates and registers a plan: persisted in the database with its progress; idempotent for
    /// the plan already registered; a conflicting mapping for a table in flight is an error.
    public func register(_ plan: MigrationPlan) throws(FerryError) {
        try Self.refuseFileSources(of: plan, path: path)
        engine.ciphers.supply(from: plan)
        if isReadOnly { return try Self.requireRegistered(plan, engine: engine, path: path) }
        try pool.writeWithoutTransaction { db throws(FerryError) in try engine.register(plan, on: db) }
    }

    // MARK: Stepping

    /// Moves one batch of one migrating table within the time budget and returns what it did, or
    /// nil when nothing is left to migrate. Runs on the writer, between the app's transactions.
    ///
    /// When a WAL holds more than `Options.walSizeLimit`, the step first waits (at most half its
    /// budget) for a checkpoint that lets the log restart; if that checkpoint still runs, the step
    /// writes nothing and returns a report of kind `.checkpoint`. Half, so that a wait and the
    /// batch after it stay near the budget together. It waits on the writer (holding no SQLite
    /// lock: the app's reads go on), so that no app write slips in before the checkpoint ends and
    /// the step's own transaction restarts the log; an app write waits for the wait as for a batch.
    /// - Throws: SQLite and I/O errors of the batch (it rolled back), `FerryError.sourceUnavailable`,
    ///   and `FerryError.sqlite` with code `.readonly` on a read-only target.
    @discardableResult
    public func step(budget: Duration? = nil) throws(FerryError) -> StepReport? {
        if isReadOnly { throw Self.readOnlyError(path, "migration steps write it") }
        let budget = budget ?? options.stepBudget
        return try pool.writeWithoutTransaction { db throws(FerryError) in
            persistAppEdits(on: db)
            return try runner.step(on: db, budget: budget)
        }
    }

    /// Async form of `step(budget:)`.
    @discardableResult
    public func step(budget: Duration? = nil) async throws(FerryError) -> StepReport? {
        try await step(budget: budget, yielding: true)
    }

    /// A step that goes on moving while no app write waits (`yielding`, see
    /// `Options.yieldingStepLimit`), or moves one batch.
    private func step(budget: Duration?, yielding: Bool) async throws(FerryError) -> StepReport? {
        if isReadOnly { throw Self.readOnlyError(path, "migration steps write it") }
        let budget = budget ?? options.stepBudget
        return try await pool.writeWithoutTransaction { [self] db throws(FerryError) in
            persistAppEdits(on: db)
            return try runner.step(on: db, budget: budget, yielding: yielding)
        }
    }

    /// Before a step, on the writer: writes the app's edits held in memory (`AppEditLog`). A
    /// failure keeps them for the next step, which meets the same fault and reports it.
    private func persistAppEdits(on db: Connection) {
        try? appEdits.persist(on: db)
    }

    /// Steps until every table is migrated. Returns the number of rows moved. Task cancellation
    /// stops it between batches (throwing `CancellationError`): the running step is not
    /// interrupted, it ends after its batch and commits; the next call resumes.
    @discardableResult
    public func migrateAll(budget: Duration? = nil) async throws -> Int64 {
        var moved: Int64 = 0
        while true {
            try Task.checkCancellation()
            // In a task of its own, which the cancellation does not reach (it would interrupt the
            // batch and throw its work away); the step is asked to hand over instead.
            let report = try await withTaskCancellationHandler {
                try await Task { () async throws(FerryError) -> StepReport? in try await self.step(budget: budget) }.value
            } onCancel: { [runner] in
                runner.contention.requestHandover()
            }
            guard let report else { return moved }
            moved += Int64(report.rowsMoved)
        }
    }

    /// Blocking form of `migrateAll(budget:)`.
    @discardableResult
    public func migrateAllBlocking(budget: Duration? = nil) throws(FerryError) -> Int64 {
        var moved: Int64 = 0
        while let report = try step(budget: budget) { moved += Int64(report.rowsMoved) }
        return moved
    }

    // MARK: State

    /// The target tables registered in the database at `path` (lowercased names), or nil when it
    /// records no migration. Opens the file read-only and takes no ownership lock, so it works
    /// beside an open `FerryDatabase`; a wrong key fails here, before anything is written.
    public static func registeredTables(atPath path: String, configuration: DatabaseConfiguration = .init()) throws(FerryError) -> Set<String>? {
        var configuration = configuration
        configuration.readOnly = true
        configuration.createIfMissing = false
        configuration.journalMode = .keep
        let db = try sqlite(Connection(path: path, configuration: configuration))
        defer { db.close() }
        return try MigrationState.registeredTargets(on: db)
    }

    /// True when no registered table is migrating, read from the persisted state.
    public var isMigrated: Bool {
        get throws(FerryError) {
            try pool.read { db throws(FerryError) in try MigrationState.unfinishedTableCount(on: db) == 0 }
        }
    }

    /// Per-table and overall progress, read from the persisted state.
    ///
    /// - Parameter countingRowsLeft: count the rows left of every migrating table exactly (one
    ///   scan of its pending source rows on a reader) instead of estimating them from the count
    ///   taken at registration.
    public func progress(countingRowsLeft: Bool = false) throws(FerryError) -> MigrationProgress {
        let (records, sources, counted, unavailable, movedAhead) = try pool.read { db throws(FerryError) in
            let records = try MigrationState.loadTables(on: db)
            let sources = try MigrationState.loadSources(on: db)
            let movedAhead = try MigrationState.movedSetSizes(on: db)
            var counted: [String: Int64] = [:]
            let unavailable = engine.attacher.unavailableSources(on: db)
            if countingRowsLeft {
                for mapping in engine.migratingMappings where unavailable[mapping.source.schema] == nil {
                    counted[mapping.targetName.lowercased()] = try sqlite(db.scalar(
                        "SELECT count(*) FROM \(mapping.qualifiedSource) WHERE \(mapping.pendingCondition)",
                        as: Int64.self))
                }
            }
            return (records, sources, counted, unavailable, movedAhead)
        }
        let (rates, failures) = runner.health
        let tables = records.map { record -> MigrationProgress.Table in
            let key = record.target.lowercased()
            let finished = record.state == .finished
            // A step's failure, or else a source this read could not use (missing, or another file in its place).
            let sourceSchema = sources.first { $0.id == record.sourceID }?.schema
            let failure = finished ? nil : failures[key] ?? sourceSchema.flatMap { unavailable[$0] }
            let state: MigrationProgress.State = finished ? .finished
                : failure != nil ? .failed
                : (record.cursor == nil && record.rowsMoved == 0 ? .pending : .migrating)
            // Moved by the stepper, and ahead of it by the app's writes: pruned from the moved set
            // already (rows_moved_ahead, which starts below zero by the collisions quarantined at
            // registration, themselves in the moved set) or still in it.
            let moved = record.rowsMoved + max(0, (record.rowsMovedAhead ?? 0) + movedAhead[key, default: 0])
            let estimate = max(0, (record.rowsEstimate ?? 0) - moved - record.rowsQuarantined)
            let left = finished ? 0 : counted[key] ?? estimate
            let sourcePath = sources.first { $0.id == record.sourceID }?.path.map { engine.paths.resolvedPath($0) }
            return .init(name: record.target, sourceTable: record.sourceTable, sourcePath: sourcePath, filter: record.filter,
                         state: state, rowsMoved: moved, rowsQuarantined: record.rowsQuarantined, rowsLeft: left,
                         rowsLeftIsExact: finished || counted[key] != nil, rowsPerSecond: rates.rowsPerSecond(table: key),
                         lastError: failure)
        }
        return MigrationProgress(tables: tables, rowsPerSecond: rates.overall.rowsPerSecond)
    }

    // MARK: Events

    /// A stream of every migration event from now on.
    public func events() -> AsyncStream<MigrationEvent> { hub.stream() }

    /// Sets a callback for every migration event (nil removes it). It runs on the thread that
    /// produced the event: keep it short.
    public func onEvent(_ callback: (@Sendable (MigrationEvent) -> Void)?) { hub.setCallback(callback) }

    // MARK: Auto-migration

    /// Starts moving rows in the background with `schedule`; replaces a running auto-migration.
    /// It stops by itself when everything is migrated, after too many consecutive failures, on
    /// `stopAutoMigration()`, or when the database closes; it never keeps the database alive.
    public func startAutoMigration(_ schedule: AutoMigrationSchedule = .init()) {
        runner.startAuto(schedule, step: autoStep(schedule))
    }

    /// Runs auto-migration with `schedule` in the calling task, for services that own their tasks
    /// (structured concurrency; see the `FerryServiceLifecycle` product). Returns when a step has
    /// nothing left to do: every registered table migrated *and* every source cleaned (moved rows
    /// deleted, retired tables dropped), which comes after `MigrationEvent.allFinished` (use
    /// `waitUntilMigrated()` to wait for the rows alone).
    ///
    /// Cancelling the task ends it after the running batch commits (at most about one budget
    /// later: a batch is never interrupted, so no work is thrown away), and the next run resumes
    /// where this one stopped. Failed steps are retried with the schedule's backoff and reported as
    /// `MigrationEvent.error`, exactly as in `startAutoMigration(_:)`.
    /// - Throws: `FerryError.cancelled` when the task was cancelled; `FerryError.connectionClosed`
    ///   when the database closed; the last error after `maximumConsecutiveFailures` failed steps
    ///   in a row (also reported as `MigrationEvent.autoMigrationStopped`).
    public func runAutoMigration(_ schedule: AutoMigrationSchedule = .init()) async throws(FerryError) {
        switch await runner.runAuto(schedule, step: autoStep(schedule)) {
        case .finished: return
        case .cancelled: throw .cancelled
        case .closed: throw .connectionClosed
        case .stopped(let error): throw error
        }
    }

    /// One batch of auto-migration: `.none` when the database is gone, `.some(nil)` when done.
    private func autoStep(_ schedule: AutoMigrationSchedule) -> @Sendable () async throws(FerryError) -> StepReport?? {
        { [weak self] () async throws(FerryError) -> StepReport?? in
            guard let self, self.pool.isOpen else { return .none }
            // The paced schedule leaves the writer to the app between batches: one batch per
            // step. Drain mode moves on while nobody waits.
            return .some(try await self.step(budget: schedule.budget, yielding: schedule.drain))
        }
    }

    /// Stops background auto-migration (the running batch completes).
    public func stopAutoMigration() { runner.stopAuto() }

    /// True while background auto-migration runs.
    public var isAutoMigrating: Bool { runner.isAutoMigrating }
}
