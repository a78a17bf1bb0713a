import FerrySQLite
import Synchronization

/// Runs the migration's steps on the writer: one batch at a time (`step`), in the background
/// (`startAuto`), with backpressure from the checkpointer, and reports each step to the event hub,
/// its rate to the progress, and its failure to the table's state.
final class MigrationRunner: Sendable {
    private let engine: MigrationEngine
    let stepper: Stepper
    private let hub: EventHub
    let checkpointer: Checkpointer
    private let autoTask = Mutex<Task<Void, Never>?>(nil)
    /// Recent throughput, overall and per table (keys: lowercased target names).
    private let rates = Mutex(RateMeters())
    /// The error of each table's latest step, when it failed (keys: lowercased target names).
    private let failures = Mutex<[String: FerryError]>([:])
    /// Whether the app wants the writer (the app's writes report to it).
    let contention: WriterContention

    init(engine: MigrationEngine, hub: EventHub, checkpointer: Checkpointer, retirer: SourceRetirer? = nil, fixedBatchRows: Int?,
         yieldingLimit: Duration?, contention: WriterContention) {
        self.engine = engine
        self.hub = hub
        self.checkpointer = checkpointer
        // Fixed batches (tests) keep one batch per step: a scenario's steps do not depend on timing.
        self.stepper = Stepper(engine: engine, fixedBatchRows: fixedBatchRows, yieldingLimit: fixedBatchRows == nil ? yieldingLimit : nil,
                               contention: contention, retirer: retirer)
        self.contention = contention
    }

    /// The recent rates and the tables whose latest step failed.
    var health: (rates: RateMeters, failures: [String: FerryError]) {
        (rates.withLock { $0 }, failures.withLock { $0 })
    }

    /// Waits (at most half the budget) for a checkpoint that lets an oversized WAL restart.
    /// - Returns: the report of a step that spent its wait when the checkpoint still runs (the step
    ///   writes nothing); otherwise nil, and how long the step waited (its first batch is that much
    ///   shorter: see `step(on:budget:yielding:)`).
    private func waitForBacklog(budget: Duration) -> (report: StepReport?, waited: Duration) {
        let start = ContinuousClock.now
        return outcome(checkpointer.relieveBacklog(timeout: budget / 2), since: start)
    }

    private func outcome(_ relief: Checkpointer.BacklogRelief, since start: ContinuousClock.Instant) -> (report: StepReport?, waited: Duration) {
        switch relief {
        case .underLimit: return (nil, .zero)
        case .caughtUp: return (nil, ContinuousClock.now - start)
        case .stillRunning: return (checkpointWait(since: start), .zero)
        }
    }

    /// The report of a step that spent its wait for a catch-up checkpoint (backpressure).
    private func checkpointWait(since start: ContinuousClock.Instant) -> StepReport {
        let report = StepReport.checkpointWait(elapsed: ContinuousClock.now - start)
        hub.send(.checkpointWait(elapsed: report.elapsed))
        return report
    }

    /// One step on the writer `db`, between the app's transactions, with its notifications.
    ///
    /// When a WAL is over the limit the step first waits for a catch-up checkpoint
    /// (`waitForBacklog`), on the writer, so that no app write slips in while it runs (see
    /// `FerryDatabase.step(budget:)`). Its first batch is then shorter by what it waited, so that
    /// the step stays within its budget; if the checkpoint still runs, the step writes nothing and
    /// returns a report of kind `.checkpoint`. (Waiting for the writer does not count: the budget
    /// bounds how long a step holds the writer.)
    /// - Parameter yielding: see `Stepper.step(on:budget:spent:yielding:)`.
    func step(on db: Connection, budget: Duration, yielding: Bool = true) throws(FerryError) -> StepReport? {
        let backlog = waitForBacklog(budget: budget)
        if let wait = backlog.report { return wait }
        let spent = backlog.waited
        // A step is invisible to the app: its changes() and last_insert_rowid stay as they were.
        return try db.invisibly { () throws(FerryError) -> StepReport? in
            try moveOrClean(on: db, budget: budget, spent: spent, yielding: yielding)
        }
    }

    /// The step's work after the backlog wait: the pending notifications, one step of the
    /// stepper, its report, rates and failures.
    private func moveOrClean(on db: Connection, budget: Duration, spent: Duration, yielding: Bool) throws(FerryError) -> StepReport? {
        try deliverPendingNotifications(on: db)
        let report: StepReport?
        do {
            report = try stepper.step(on: db, budget: budget, spent: spent, yielding: yielding)
        } catch {
            if let table = stepper.lastTable { failures.withLock { $0[table.lowercased()] = error } }
            hub.send(.error(error))
            throw error
        }
        guard let report else { return nil }
        let key = report.table.lowercased()
        failures.withLock { _ = $0.removeValue(forKey: key) }
        if report.kind == .move { rates.withLock { $0.record(table: key, rows: report.rowsMoved, elapsed: report.elapsed) } }
        checkpointer.checkpointIfNeeded()
        hub.send(.batch(report))
        if report.tableFinished {
            try deliverPendingNotifications(on: db)
            for schema in try engine.attacher.unneededSourceSchemas(on: db) { try? db.detach(schema) }
        }
        return report
    }

    private func deliverPendingNotifications(on db: Connection) throws(FerryError) {
        let pending = try MigrationState.pendingNotifications(on: db)
        guard !pending.tables.isEmpty || pending.all else { return }
        for table in pending.tables { hub.send(.tableFinished(table: table)) }
        if pending.all { hub.send(.allFinished) }
        try MigrationState.markNotified(tables: pending.tables, all: pending.all, on: db)
    }

    // MARK: Auto-migration

    /// Starts `step` in the background with `schedule`; replaces a running auto-migration.
    /// - Parameter step: one batch; `.none` when the database is gone, `.some(nil)` when done.
    func startAuto(_ schedule: AutoMigrationSchedule, step: @escaping @Sendable () async throws(FerryError) -> StepReport??) {
        let task = Task.detached(priority: .utility) { [hub] in
            _ = await AutoMigrator.run(schedule: schedule, step: step) { event in hub.send(event) }
        }
        let previous = autoTask.withLock { t -> Task<Void, Never>? in
            defer { t = task }
            return t
        }
        if let previous {
            previous.cancel()
            contention.requestHandover()
        }
    }

    /// Runs the auto-migration loop in the calling task (see `AutoMigrator.run`).
    func runAuto(_ schedule: AutoMigrationSchedule, step: @escaping @Sendable () async throws(FerryError) -> StepReport??) async -> AutoMigrator.Outcome {
        // The running batch is never interrupted; a step that goes on moving ends after its batch.
        await withTaskCancellationHandler {
            await AutoMigrator.run(schedule: schedule, step: step) { [hub] event in hub.send(event) }
        } onCancel: { [contention] in
            contention.requestHandover()
        }
    }

    /// Stops background auto-migration (the running batch completes).
    func stopAuto() {
        let task = autoTask.withLock { t -> Task<Void, Never>? in
            defer { t = nil }
            return t
        }
        task?.cancel()
        if task != nil { contention.requestHandover() }  // the running step ends after its batch
    }

    /// True while background auto-migration runs.
    var isAutoMigrating: Bool {
        autoTask.withLock { $0.map { !$0.isCancelled } ?? false }
    }
}
