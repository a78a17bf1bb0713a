import FerrySQLite
import Foundation

/// Moves rows from sources to targets in small, set-based batches, then cleans the sources.
///
/// **A step** runs one batch, or batch after batch in one transaction while the app leaves the
/// writer alone (`runChunks`); cleanup chunks alike. **A batch** moves rows of one mapping in a
/// transaction that writes *only the target file*:
/// ```sql
/// SELECT max(r) FROM (SELECT rowid AS r FROM src.S NOT INDEXED WHERE rowid > :cursor AND <filter> ORDER BY rowid LIMIT :n) -- hi
/// INSERT INTO main.T(rowid, cols) SELECT rowid, cols FROM src.S NOT INDEXED
///     WHERE rowid > :cursor AND rowid <= :hi AND <filter> AND rowid NOT IN <moved set>
/// -- MigrationState.advance: forget the moved-set rows the cursor covers now, then
/// -- record cursor = :hi and the counts
/// ```
/// The source is only read while a table migrates. Which source rows are already in the target is
/// recorded in the target, in the same transaction as the rows: the cursor (every matching row at
/// or below it has moved) and the moved set (rows above it that a write moved early). So a batch is
/// a single-file atomic commit: a crash at any instant (power loss, `kill -9`) leaves either the
/// whole batch or none of it, never a row on both sides or on neither, and nothing to repair. A
/// reader takes the rows, the cursor and the moved set from one snapshot of the target, and the
/// source does not change under it, so concurrent readers never see a row missing or twice.
///
/// Every range, count and next position is read through `SourceCursor`, the same code for rowid
/// sources and sources without rowid (in primary-key order). The keyset cursor only moves forward: rows outside the filter are scanned once in total,
/// never again (a filtered migration stays linear). `NOT INDEXED` keeps SQLite on the rowid b-tree.
///
/// **Cleanup** runs after a table finished, when no read uses its source any more: later steps
/// delete the moved rows from the source in budgeted chunks and drop the source table when it is
/// empty (unless configured to keep it). Rows outside the filter stay untouched. Cleanup only
/// deletes rows at or below the final cursor, so it is idempotent and safe to interrupt.
final class Stepper: @unchecked Sendable {
    // Only used on the writer's serial queue.
    let engine: MigrationEngine
    /// Rows per batch, by table and phase, adapted to the time budget.
    var batchSizes = BatchSizer()
    private var rotation = 0
    /// Retires source tables of their own file off the writer (nil: on the writer, in the step).
    let retirer: SourceRetirer?
    /// Where each finished table's cleanup stands in this process, by table (lowercased).
    var cleanups: [String: CleanupProgress] = [:]
    /// The finished tables whose moves this process made durable before their cleanup deletes
    /// anything (`MigrationState.syncEarlierCommits`), by `movesIdentity`: once per table, not at
    /// every counting step.
    var durableBeforeCleanup: Set<String> = []
    /// The target table the latest step worked on (set before the step's work, so a failed step
    /// names its table too).
    private(set) var lastTable: String?

    /// Rows per batch and per cleanup chunk when set (tests); nil adapts them to the budget.
    let fixedBatchRows: Int?
    /// How long a step may go on moving batches in its transaction while no app write waits (nil:
    /// one batch per step). See `runChunks`.
    let yieldingLimit: Duration?
    /// Whether the app wants the writer.
    let contention: WriterContention
    /// The commit's time as a share of the batches' time, by phase, from the latest step that ran
    /// several batches: a step that goes on moving stops early enough for its commit to end
    /// within `yieldingLimit` too (on an encrypted file a large commit costs a third of the work).
    var commitShares: [BatchSizer.Phase: Double] = [:]
    /// The tables whose set-based copy met a uniqueness conflict in this process: their copies run
    /// in a savepoint and fall back to row by row (see `copyingSetBased`).
    var copiesInSavepoint: Set<String> = []
    /// The row recorder defined on each connection the stepper copied on (the writer's).
    var recorders: [ObjectIdentifier: RowRecorder] = [:]

    init(engine: MigrationEngine, fixedBatchRows: Int? = nil, yieldingLimit: Duration? = nil,
         contention: WriterContention = WriterContention(waiting: { 0 }), retirer: SourceRetirer? = nil) {
        self.engine = engine
        self.retirer = retirer
        self.fixedBatchRows = fixedBatchRows.map { max(1, $0) }
        self.yieldingLimit = yieldingLimit
        self.contention = contention
    }

    /// Moves batches of one migrating table, or cleans chunks of a finished table's source (one,
    /// or more while the app leaves the writer alone). Returns nil when there is nothing left to do.
    /// - Parameter yielding: the step may go on moving batches while no app write waits (see
    ///   `runChunks`); false for one batch.
    /// - Parameter spent: the part of the budget the step already spent waiting for a checkpoint;
    ///   its first batch is smaller by that share (at most by four fifths).
    func step(on db: Connection, budget: Duration, spent: Duration = .zero, yielding: Bool = true) throws(FerryError) -> StepReport? {
        let context = StepContext(budget: budget, spent: spent, yields: yielding)
        contention.stepBegins()
        guard !db.isInTransaction else {
            throw .misuse("a migration step runs its own transaction; call it outside of a transaction")
        }
        lastTable = nil
        db.clearAuthorizerDenial()
        do {
            return try stepOnce(on: db, context)
        } catch {
            // An app trigger that fires (or compiles) for Ferry's own moves and deletes and reaches
            // what the authorizer protects: the typed error says what and why, not "not authorized".
            guard error.resultCode == .auth, let denial = db.lastAuthorizerDenial else { throw error }
            throw .accessDenied(object: AccessDenial.objectName(denial.request), statement: "a migration step of \(lastTable ?? "?")",
                                reason: denial.reason)
        }
    }

    /// `step`'s work, once its checks passed.
    private func stepOnce(on db: Connection, _ context: StepContext) throws(FerryError) -> StepReport? {
        let migrating = engine.migratingMappings
        if !migrating.isEmpty {
            // Cross-file sources first (they are the ones that keep a file attached), then round-robin.
            rotation += 1
            let ordered = migrating.filter { $0.source.path != nil } + migrating.filter { $0.source.path == nil }
            let mapping = ordered[rotation % ordered.count]
            lastTable = mapping.targetName
            do {
                return try withoutForeignKeys(if: try sqlite(db.fetchOne("PRAGMA main.foreign_key_list(\(q(mapping.target.name)))")) != nil, on: db) {
                    () throws(FerryError) in try moveBatch(mapping, on: db, context)
                }
            } catch {
                // A source row whose value makes the filter or a feed read the clock: refused as at registration.
                throw MigrationEngine.timeValueFailure(error, filter: mapping.record.filter ?? "(a column feed)")
            }
        }
        if let mapping = engine.mappingsAwaitingCleanup.first {
            lastTable = mapping.targetName
            if mapping.source.path != nil {
                // Its schema is read next: a missing source fails here with its typed error.
                try engine.attacher.attachRequiredSource(mapping.source, on: db)
            }
            let sourceForeignKeys: Int? = try sqlite(db.scalar(
                "SELECT 1 FROM \(q(mapping.source.schema)).sqlite_master WHERE type = 'table' AND sql LIKE '%REFERENCES%' LIMIT 1"))
            return try withoutForeignKeys(if: sourceForeignKeys != nil, on: db) { () throws(FerryError) in
                try cleanChunk(mapping, on: db, context)
            }
        }
        return nil
    }

    /// Runs `body` with foreign keys not enforced, when `condition` holds and the connection
    /// enforces them. Ferry's own moves and deletes are not the app's writes: a moved row was in the
    /// finished table all along (its parent may still be pending, in another migrating table), and
    /// deleting moved rows from a source (or dropping it) must not cascade to the source's other
    /// tables, whose rows may not have moved yet. The pragma is set outside any transaction (inside
    /// one SQLite ignores it), and it makes SQLite compile statements again: only when needed.
    func withoutForeignKeys<T>(if condition: Bool, on db: Connection, _ body: () throws(FerryError) -> T) throws(FerryError) -> T {
        guard condition, try sqlite(db.scalar("PRAGMA foreign_keys", as: Int.self)) == 1 else { return try body() }
        try sqlite(db.execute("PRAGMA foreign_keys = OFF"))
        let result: T
        do {
            result = try body()
        } catch {
            // Enforcement comes back either way; should that fail, its error is the one reported
            // (the writer would otherwise go on without foreign keys), else the body's.
            try sqlite(db.execute("PRAGMA foreign_keys = ON"))
            throw error
        }
        try sqlite(db.execute("PRAGMA foreign_keys = ON"))
        return result
    }

    /// Runs `chunk` (one batch of a table: it moves up to `limit` rows, or finishes the table) in
    /// one write transaction, and again in the same transaction while the table has rows left, the
    /// app leaves the writer alone (`WriterContention`: no write waits, none for `yieldingLimit`)
    /// and the step is within `yieldingLimit`.
    /// A batch fits the budget, so an app write that arrives waits at most for the batch that
    /// runs and the commit; while nobody waits, the batches share one commit, and pages they all
    /// touch (a scattered index's) are written once instead of once per batch.
    ///
    /// While the app writes (it wrote within `yieldingLimit`, or `appActivityWindow`), a batch
    /// runs as `piecesWhileTheAppWrites` pieces in the same transaction, and the step commits after
    /// the piece during which an app write began to wait: the write waits for a piece and the
    /// commit instead of a whole batch. Nobody waiting, the pieces add up to one batch.
    ///
    /// Rows per batch adapt to the budget: after each batch, on its own time (plus the commit, for
    /// the last one); in pieces, on the step's rows and time.
    /// - Parameter writesMainOnly: the chunks write main (and temp) alone, as moves do: the
    ///   transaction takes main's write lock only, not every attached file's as `BEGIN IMMEDIATE`
    ///   would, so a connection writing a source file (the retirement of another table of that
    ///   file, another process) does not hold the step up. Cleanup, which writes the source,
    ///   locks every file.
    /// - Parameter phase: the batch sizer's phase of the chunks (with the table's name).
    func runChunks(_ phase: BatchSizer.Phase, of table: String, _ context: StepContext, writesMainOnly: Bool = false, on db: Connection,
                   _ chunk: (_ limit: Int) throws(FerryError) -> (moved: Int, quarantined: Int, finished: Bool))
        throws(FerryError) -> (moved: Int, quarantined: Int, finished: Bool, elapsed: Duration) {
        let start = ContinuousClock.now
        var total = (moved: 0, quarantined: 0, finished: false)
        var last = (limit: 0, rows: 0, start: start)
        var batches = 0
        var workEnded = start
        let commitShare = commitShares[phase] ?? (phase == .clean ? Self.firstCleanupCommitShare : Self.firstCommitShare)
        let pieces = fixedBatchRows == nil && contention.appIsActive(within: yieldingLimit ?? Self.appActivityWindow)
            ? Self.piecesWhileTheAppWrites : 1
        // A move writes main alone: it takes main's write lock, never a source file's (`MigrationState.writingMain`).
        func chunks() throws(FerryError) {
            var share = fixedBatchRows == nil ? context.firstBatchShare : 1
            let batch = max(16, Int(Double(fixedBatchRows ?? batchSizes[phase, table: table] ?? 512) * share))
            while true {
                let adapted = fixedBatchRows ?? batchSizes[phase, table: table] ?? 512
                let limit = pieces > 1 ? min(max(16, (batch + pieces - 1) / pieces), batch - total.moved - total.quarantined)
                    : share < 1 ? max(16, Int(Double(adapted) * share)) : adapted
                share = 1
                let chunkStart = ContinuousClock.now
                let done = try chunk(limit)
                batches += 1
                workEnded = ContinuousClock.now
                total.moved += done.moved
                total.quarantined += done.quarantined
                last = pieces > 1 ? (adapted, total.moved + total.quarantined, start) : (adapted, done.moved + done.quarantined, chunkStart)
                if done.finished {
                    total.finished = true
                    return
                }
                // In pieces: the next one while nobody waits, up to one batch.
                if pieces > 1 {
                    guard total.moved + total.quarantined < batch, contention.mayRunNextPiece() else { return }
                    continue
                }
                // Another batch only when it and the commit end within the limit too.
                let now = ContinuousClock.now
                guard context.yields, let yieldingLimit, ((now - start) + (now - chunkStart)) * (1 + commitShare) < yieldingLimit,
                      contention.isQuiet(for: yieldingLimit) else { return }
                batchSizes.adapt(phase, table: table, limit: adapted, done: last.rows, elapsed: ContinuousClock.now - chunkStart,
                                 budget: context.budget)
            }
        }
        if writesMainOnly { try MigrationState.writingMain(on: db, chunks) } else { try db.transaction(.immediate, chunks) }
        if pieces == 1, batches > 1, workEnded > start {
            commitShares[phase] = (ContinuousClock.now - workEnded) / (workEnded - start)
        }
        batchSizes.adapt(phase, table: table, limit: last.limit, done: last.rows, elapsed: ContinuousClock.now - last.start,
                         budget: context.budget)
        return (total.moved, total.quarantined, total.finished, ContinuousClock.now - start)
    }

    /// The commit's share of a step that runs several batches, until one was measured
    /// (`commitShares`). Measured (300k rows, scattered index, drain mode): moves 0.33-0.56 into a
    /// SQLCipher file, 0.09-0.14 into a plain one; cleanup's deletes 0.70-0.89 in a SQLCipher file
    /// (`firstCleanupCommitShare`), 0.21 in a plain one.
    static let firstCommitShare = 0.4
    /// The same for cleanup's deletes.
    static let firstCleanupCommitShare = 0.8
    /// The pieces a batch runs as while the app writes (see `runChunks`).
    static let piecesWhileTheAppWrites = 4
    /// How recently the app must have written to count as writing, when steps do not go on
    /// moving (`yieldingLimit` nil; otherwise that limit).
    static let appActivityWindow = Duration.milliseconds(250)
}
