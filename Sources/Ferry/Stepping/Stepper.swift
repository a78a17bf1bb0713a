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
/// The keyset cursor only moves forward: rows outside the filter are scanned once in total,
/// never again (a filtered migration stays linear). `NOT INDEXED` keeps SQLite on the rowid b-tree.
///
/// **Cleanup** runs after a table finished, when no read uses its source any more: later steps
/// delete the moved rows from the source in budgeted chunks and drop the source table when it is
/// empty (unless configured to keep it). Rows outside the filter stay untouched. Cleanup only
/// deletes rows at or below the final cursor, so it is idempotent and safe to interrupt.
final class Stepper: @unchecked Sendable {
    // Only used on the writer's serial queue.
    let engine: MigrationEngine
    /// Rows per batch, adapted to the time budget.
    var batchRows: [String: Int] = [:]
    private var rotation = 0
    /// The rowid up to which each table's source was cleaned in this process.
    private var cleanedUpTo: [String: Int64] = [:]
    /// Where cleanup's count of each table's matching source rows stands (see `countBeforeCleaning`).
    private var cleanupCounts: [String: (position: Int64, count: Int64)] = [:]
    /// Retires source tables of their own file off the writer (nil: on the writer, in the step).
    let retirer: SourceRetirer?

    /// The finished tables whose moves this process made durable before their cleanup deletes
    /// anything (`MigrationState.syncEarlierCommits`), by `movesIdentity`: once per table, not at
    /// every counting step.
    private var durableBeforeCleanup: Set<String> = []

    /// A finished table's moves as cleanup sees them: target, source, cursors and counts (a table
    /// registered again under the same name moves other rows, and syncs again).
    static func movesIdentity(_ record: TableRecord) -> String {
        "\(record.target.lowercased())|\(record.sourceID)|\(record.sourceTable)|\(record.cursor ?? 0)|\(record.keyCursor ?? [])|"
            + "\(record.rowsMoved)|\(record.rowsQuarantined)|\(record.rowsMovedAhead ?? -1)"
    }

    /// Before a finished table's cleanup deletes anything (both kinds of source): cleanup deletes
    /// source rows because the target's commits say they moved, so those commits are made durable
    /// first (`MigrationState.syncEarlierCommits`), once per table in this process.
    func makeMovesDurable(_ record: TableRecord, on db: Connection) throws(FerryError) {
        let identity = Self.movesIdentity(record)
        guard !durableBeforeCleanup.contains(identity) else { return }
        try MigrationState.syncEarlierCommits(on: db)
        durableBeforeCleanup.insert(identity)
    }
    /// The row key up to which each table's source without rowid was cleaned in this process, and
    /// where its count stands.
    var keyedCleanup: [String: (cleanedTo: [UInt8]?, counted: (position: [UInt8]?, count: Int64)?)] = [:]
    /// The target table the latest step worked on (set before the step's work, so a failed step
    /// names its table too).
    private(set) var lastTable: String?

    /// Rows per batch and per cleanup chunk when set (tests); nil adapts them to the budget.
    let fixedBatchRows: Int?
    /// How long, in seconds, a step may go on moving batches in its transaction while no app write
    /// waits (nil: one batch per step). See `runChunks`.
    let yieldingLimit: Double?
    /// Whether the app wants the writer.
    let contention: WriterContention
    /// Whether the running step may go on while no app write waits.
    private var stepYields = true
    /// The share of the budget the running step's first batch may use: less than 1 when the step
    /// waited for a checkpoint before it could write, so that the step as a whole stays within its
    /// budget.
    private var firstBatchShare = 1.0
    /// The tables whose set-based copy met a uniqueness conflict in this process: their copies run
    /// in a savepoint and fall back to row by row (see `copyingSetBased`).
    private var copiesInSavepoint: Set<String> = []
    /// The row recorder defined on each connection the stepper copied on (the writer's).
    private var recorders: [ObjectIdentifier: RowRecorder] = [:]
    /// The recorded batch up to which each table's source was cleaned in this process (tables that
    /// record their moves, `cleanRecordedChunk`).
    var recordedCleanedTo: [String: RecordedCleanupPosition] = [:]

    init(engine: MigrationEngine, fixedBatchRows: Int? = nil, yieldingLimit: Double? = nil,
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
    /// - Parameter spent: seconds of the budget the step already spent waiting for a checkpoint;
    ///   its first batch is smaller by that share (at most by four fifths).
    func step(on db: Connection, budget: Double, spent: Double = 0, yielding: Bool = true) throws(FerryError) -> StepReport? {
        stepYields = yielding
        firstBatchShare = budget > 0 ? min(1, max(0.2, 1 - spent / budget)) : 1
        contention.stepBegins()
        guard !db.isInTransaction else {
            throw .misuse("a migration step runs its own transaction; call it outside of a transaction")
        }
        lastTable = nil
        db.clearAuthorizerDenial()
        do {
            return try stepOnce(on: db, budget: budget)
        } catch {
            // An app trigger that fires (or compiles) for Ferry's own moves and deletes and reaches
            // what the authorizer protects: the typed error says what and why, not "not authorized".
            guard error.resultCode == .auth, let denial = db.lastAuthorizerDenial else { throw error }
            throw .accessDenied(object: AccessDenial.objectName(denial.request), statement: "a migration step of \(lastTable ?? "?")",
                                reason: denial.reason)
        }
    }

    /// `step`'s work, once its checks passed.
    private func stepOnce(on db: Connection, budget: Double) throws(FerryError) -> StepReport? {
        let migrating = engine.migratingMappings
        if !migrating.isEmpty {
            // Cross-file sources first (they are the ones that keep a file attached), then round-robin.
            rotation += 1
            let ordered = migrating.filter { $0.source.path != nil } + migrating.filter { $0.source.path == nil }
            let mapping = ordered[rotation % ordered.count]
            lastTable = mapping.targetName
            do {
                return try withoutForeignKeys(if: try sqlite(db.fetchOne("PRAGMA main.foreign_key_list(\(q(mapping.target.name)))")) != nil, on: db) {
                    () throws(FerryError) in try moveBatch(mapping, on: db, budget: budget)
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
                try engine.attachRequiredSource(mapping.source, on: db)
            }
            let sourceForeignKeys: Int? = try sqlite(db.scalar(
                "SELECT 1 FROM \(q(mapping.source.schema)).sqlite_master WHERE type = 'table' AND sql LIKE '%REFERENCES%' LIMIT 1"))
            return try withoutForeignKeys(if: sourceForeignKeys != nil, on: db) { () throws(FerryError) in
                try cleanChunk(mapping, on: db, budget: budget)
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

    // MARK: Moving

    private func moveBatch(_ mapping: ResolvedMapping, on db: Connection, budget: Double) throws(FerryError) -> StepReport {
        if !mapping.sourceHasRowid { return try moveKeyedBatch(mapping, on: db, budget: budget) }
        if mapping.source.path != nil {
            // Attached by every use of the writer when available; a batch needs it.
            try engine.attachRequiredSource(mapping.source, on: db)
        }
        let key = mapping.targetName.lowercased()
        var record = mapping.record
        let work = try retryingAfterConflict(mapping) { () throws(FerryError) in
            record = mapping.record  // as the step began (a retry follows a rollback)
            return try runChunks(key: key, budget: budget, writesMainOnly: true, on: db) { limit throws(FerryError) in
                let cursor = record.cursor ?? Int64.min
                let hi: Int64?
                do throws(FerryError) {
                    // Reads only the source: an I/O failure here is the source's.
                    hi = try sqlite(db.scalar("""
                        SELECT max(r) FROM (SELECT \(mapping.sourceRowid) AS r FROM \(mapping.sourceRangeScan)
                        WHERE \(mapping.sourceRowid) > ?1 AND \(mapping.filterCondition) ORDER BY \(mapping.sourceRowid) LIMIT ?2)
                        """, [.integer(cursor), .integer(Int64(limit))]))
                } catch {
                    throw mapping.source.path.map { MigrationEngine.sourceError(error, path: engine.resolvedPath($0)) } ?? error
                }
                guard let hi else {
                    // Nothing above the cursor: the table is complete. This is an explicit check that
                    // no matching source row is left unmoved, never an inference from an empty or
                    // ignored insert.
                    try finishTable(mapping, record: &record, on: db)
                    return (0, 0, true)
                }
                let copied = try FerryMove.guarding(on: db) { () throws(FerryError) in try copyRange(mapping, low: cursor, high: hi, on: db) }
                // The moved-set rows `advance` prunes lie in this batch's range (app writes move
                // pending rows only, above the cursor): looked up only when the copy found some.
                let accounted = try copied.accounted.map { rows throws(FerryError) in
                    MovedRows(copied.movedInRange ? rows + (try movedAheadRows(mapping, upTo: hi, on: db)) : rows)
                }
                try MigrationState.advance(&record, to: hi, moved: copied.moved, quarantined: copied.quarantined, accounted: accounted, on: db)
                return (copied.moved, copied.quarantined, false)
            }
        }
        if !db.isInTransaction { engine.raiseCursorFloor(mapping, committed: record) }
        return moveReport(mapping, record: record, work)
    }

    /// The table has no matching row left: finished, and the app's triggers on it read as it
    /// wrote them again.
    func finishTable(_ mapping: ResolvedMapping, record: inout TableRecord, on db: Connection) throws(FerryError) {
        let accounted = !mapping.recordsMovedRows ? nil
            : mapping.sourceHasRowid ? MovedRows(try movedAheadRows(mapping, upTo: Int64.max, on: db))
            : MovedRows(keyed: try movedAheadKeys(mapping, where: "1", on: db))
        try MigrationState.finish(&record, accounted: accounted, on: db)
        try AppTriggerGuard.restore(target: mapping.targetName, on: db)
    }

    /// The report of a step that moved rows of `mapping` (`record` as it left it).
    func moveReport(_ mapping: ResolvedMapping, record: TableRecord, _ work: (moved: Int, quarantined: Int, finished: Bool, elapsed: Double)) -> StepReport {
        engine.updateRecord(record)
        let left = max(0, (record.rowsEstimate ?? 0) - record.rowsMoved - record.rowsQuarantined)
        return StepReport(kind: .move, table: mapping.targetName, rowsMoved: work.moved, rowsQuarantined: work.quarantined,
                          sourceRowsDeleted: 0, rowsLeft: work.finished ? 0 : left, elapsed: .seconds(work.elapsed),
                          tableFinished: work.finished, allFinished: engine.migratingMappings.isEmpty)
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
    func runChunks(key: String, budget: Double, writesMainOnly: Bool = false, on db: Connection,
                   _ chunk: (_ limit: Int) throws(FerryError) -> (moved: Int, quarantined: Int, finished: Bool))
        throws(FerryError) -> (moved: Int, quarantined: Int, finished: Bool, elapsed: Double) {
        let start = ContinuousClock.now
        var total = (moved: 0, quarantined: 0, finished: false)
        var last = (limit: 0, rows: 0, start: start)
        let pieces = fixedBatchRows == nil && contention.appIsActive(within: yieldingLimit ?? Self.appActivityWindow)
            ? Self.piecesWhileTheAppWrites : 1
        try db.transaction(writesMainOnly ? .deferred : .immediate) { () throws(FerryError) in
            if writesMainOnly { try sqlite(db.executeCached(MigrationState.takeMainWriteLockSQL)) }
            var share = fixedBatchRows == nil ? firstBatchShare : 1
            let batch = max(16, Int(Double(fixedBatchRows ?? batchRows[key] ?? 512) * share))
            while true {
                let adapted = fixedBatchRows ?? batchRows[key] ?? 512
                let limit = pieces > 1 ? min(max(16, (batch + pieces - 1) / pieces), batch - total.moved - total.quarantined)
                    : share < 1 ? max(16, Int(Double(adapted) * share)) : adapted
                share = 1
                let chunkStart = ContinuousClock.now
                let done = try chunk(limit)
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
                guard stepYields, let yieldingLimit, (ContinuousClock.now - start).seconds < yieldingLimit,
                      contention.isQuiet(for: yieldingLimit) else { return }
                adapt(key: key, limit: adapted, moved: last.rows, elapsed: (ContinuousClock.now - chunkStart).seconds, budget: budget)
            }
        }
        adapt(key: key, limit: last.limit, moved: last.rows, elapsed: (ContinuousClock.now - last.start).seconds, budget: budget)
        return (total.moved, total.quarantined, total.finished, (ContinuousClock.now - start).seconds)
    }

    /// The pieces a batch runs as while the app writes (see `runChunks`).
    static let piecesWhileTheAppWrites = 4
    /// How recently the app must have written to count as writing, when steps do not go on
    /// moving (`yieldingLimit` nil; otherwise that limit).
    static let appActivityWindow = 0.25

    /// Copies the mapping's unmoved source rows with rowid in (low, high] into the target.
    /// Set-based; on a constraint conflict it falls back to row by row and sets conflicting rows
    /// aside (see `copyingSetBased`).
    ///
    /// The moved set rarely holds a row of the range (only rows an app write moved ahead of the
    /// stepper): when it holds none, the copy leaves out the `NOT IN <moved set>` test, which
    /// otherwise costs a probe per row (about a third of the copy on a table without secondary
    /// indexes, measured with ferry-bench).
    ///
    /// For a mapping that records its moves (`ResolvedMapping.recordsMovedRows`), also returns the
    /// source rows the copy accounted for, as the copy itself decided them: the set-based copy's
    /// filter term records each row it matches (`rangeCondition(recording:)`), row by row records
    /// the rows it listed. (A matched row the `NOT IN` test then left out is in the moved set, which
    /// `MigrationState.advance` adds to the record anyway.)
    private func copyRange(_ mapping: ResolvedMapping, low: Int64, high: Int64, on db: Connection) throws(FerryError)
        -> (moved: Int, quarantined: Int, accounted: [(rowid: Int64, digest: UInt64)]?, movedInRange: Bool) {
        let movedInRange = try MigrationState.hasMovedRows(target: mapping.targetName, above: low, upTo: high, on: db)
        let recorder = mapping.recordsMovedRows ? try movedRowRecorder(on: db) : nil
        let recording = recorder != nil
        let condition = " WHERE \(movedInRange ? mapping.pendingRangeCondition(recording: recording) : mapping.rangeCondition(recording: recording))"
        var listed: [(rowid: Int64, digest: UInt64)]?
        let copied = try copyingSetBased(mapping, on: db, { rollingBack throws(FerryError) in
            recorder?.reset()
            try sqlite(db.execute(mapping.insertSelectHead(rollingBack: rollingBack) + condition, [.integer(low), .integer(high)]))
        }, rowByRow: { () throws(FerryError) in
            let rows = try copyRowByRow(mapping, low: low, high: high, on: db)
            listed = rows.listed
            return (rows.moved, rows.quarantined)
        })
        guard let recorder else { return (copied.moved, copied.quarantined, nil, movedInRange) }
        let accounted = listed ?? recorder.take().compactMap { entry -> (rowid: Int64, digest: UInt64)? in
            if case .integer(let rowid) = entry.identity { (rowid, entry.digest) } else { nil }
        }
        return (copied.moved, copied.quarantined, accounted, movedInRange)
    }

    /// The source rows of `mapping`'s moved set (moved ahead by app writes) with rowid at or below
    /// `high`, with their digests: the rows `MigrationState.advance` (or `finish`) forgets, which the
    /// batch's record accounts for.
    func movedAheadRows(_ mapping: ResolvedMapping, upTo high: Int64, on db: Connection) throws(FerryError) -> [(rowid: Int64, digest: UInt64)] {
        // Driven by the moved set (a few rows, usually none): the source is looked up by rowid, never scanned.
        try sqlite(db.fetchAll("""
            SELECT \(mapping.sourceRowid), \(RowDigest.function)(\(mapping.sourceDigestArguments)) FROM \(mapping.qualifiedSource)
            WHERE \(mapping.sourceRowid) IN (\(MigrationState.movedRowidsSQL(target: mapping.targetName)) AND source_rowid <= ?1)
            """, [.integer(high)])).map { row throws(FerryError) in (try sqlite(row.get(0)), UInt64(bitPattern: try sqlite(row.get(1)))) }
    }

    /// The moved-set rows of `mapping`'s source without rowid that `condition` (on the moved set's
    /// `source_rowid`, a row key) selects, with their keys and digests (`movedAheadRows`' keyed form).
    func movedAheadKeys(_ mapping: ResolvedMapping, where condition: String, on db: Connection) throws(FerryError) -> [(key: [UInt8], digest: UInt64)] {
        let moved = "(\(MigrationState.movedRowidsSQL(target: mapping.targetName)) AND \(condition))"
        return try sqlite(db.fetchAll("""
            SELECT \(mapping.sourceIdentity), \(RowDigest.function)(\(mapping.sourceDigestArguments)) FROM \(mapping.qualifiedSource)
            WHERE \(mapping.sourceRows(identifiedIn: moved, column: "source_rowid"))
            """)).map { row throws(FerryError) in (try sqlite(row.get(0)), UInt64(bitPattern: try sqlite(row.get(1)))) }
    }

    /// The writer's row recorder (`ResolvedMapping.movedRowRecorderFunction`), defined on `db` at
    /// its first use (defining a function makes SQLite compile the connection's statements again).
    func movedRowRecorder(on db: Connection) throws(FerryError) -> RowRecorder {
        // Kept by connection; a connection that lacks the function (a new one at a freed one's
        // address) gets its own.
        if let recorder = recorders[ObjectIdentifier(db)], db.hasProcedure(ResolvedMapping.movedRowRecorderFunction) { return recorder }
        let recorder = try sqlite(db.defineRowRecorder(ResolvedMapping.movedRowRecorderFunction))
        recorders[ObjectIdentifier(db)] = recorder
        return recorder
    }

    /// Runs a batch's set-based copy (`insert`), the common case: the target holds no row with a
    /// key of the batch's rows. It runs as `INSERT OR ROLLBACK`, which needs no statement journal:
    /// with a scattered index, journaling every page a batch touches took about a fifth of the
    /// batch (ferry-bench, 1M rows, one batch per 10 ms step: 708-835 → 1,030-1,125 rows per
    /// batch). A uniqueness conflict then rolls the step's transaction back; the table is marked
    /// (`copiesInSavepoint`) and `retryingAfterConflict` runs the step again, whose copies run in
    /// a savepoint that falls back to row by row (`rowByRow`), setting conflicting rows aside.
    /// A table that met one conflict keeps that way for the rest of its migration in this process.
    /// SQLite still journals a copy whose target has a trigger calling a function in its `WHEN`
    /// (an app trigger's condition, a filter's function in the redirect trigger, `ferry_key` of a
    /// source without rowid): the copy is then as fast as before, no slower.
    func copyingSetBased(_ mapping: ResolvedMapping, on db: Connection, _ insert: (_ rollingBack: Bool) throws(FerryError) -> Void,
                         rowByRow: () throws(FerryError) -> (moved: Int, quarantined: Int)) throws(FerryError) -> (moved: Int, quarantined: Int) {
        let key = mapping.targetName.lowercased()
        guard copiesInSavepoint.contains(key) else {
            do {
                try insert(true)
            } catch where FerryMove.isUniquenessConflict(error) {
                copiesInSavepoint.insert(key)
                throw error
            }
            return (db.changes, 0)
        }
        do {
            return try db.savepoint { () throws(FerryError) in
                try insert(false)
                return (db.changes, 0)
            }
        } catch where FerryMove.isUniquenessConflict(error) {
            return try rowByRow()
        }
    }

    /// Runs `step` (one step's moves of `mapping`'s table); when its set-based copy met a
    /// uniqueness conflict, which rolled the transaction back (`copyingSetBased`), runs it again.
    func retryingAfterConflict<T>(_ mapping: ResolvedMapping, _ step: () throws(FerryError) -> T) throws(FerryError) -> T {
        let key = mapping.targetName.lowercased()
        let copiedSetBased = !copiesInSavepoint.contains(key)
        do {
            return try step()
        } catch where copiedSetBased && copiesInSavepoint.contains(key) && FerryMove.isUniquenessConflict(error) {
            return try step()
        }
    }

    /// Copies the range's pending rows one by one, setting conflicting ones aside; returns the
    /// counts and the rows it listed (each moved or quarantined), with their digests.
    private func copyRowByRow(_ mapping: ResolvedMapping, low: Int64, high: Int64, on db: Connection) throws(FerryError)
        -> (moved: Int, quarantined: Int, listed: [(rowid: Int64, digest: UInt64)]) {
        let listed: [(rowid: Int64, digest: UInt64)] = try sqlite(db.fetchAll("""
            SELECT \(mapping.sourceRowid), \(RowDigest.function)(\(mapping.sourceDigestArguments)) FROM \(mapping.sourceRangeScan)
            WHERE \(mapping.pendingRangeCondition) ORDER BY 1
            """, [.integer(low), .integer(high)])).map { row throws(FerryError) in (try sqlite(row.get(0)), UInt64(bitPattern: try sqlite(row.get(1)))) }
        let insertOne = mapping.insertSelectHead() + " WHERE \(mapping.sourceRowid) = ?1"
        var moved = 0
        var quarantined = 0
        for (rowid, _) in listed {
            do {
                try db.savepoint { () throws(FerryError) in try sqlite(db.execute(insertOne, [.integer(rowid)])) }
                moved += 1
            } catch where FerryMove.isUniquenessConflict(error) {
                try Quarantine.record(mapping, identity: .integer(rowid), reason: "\(error)", on: db)
                quarantined += 1
            }
        }
        return (moved, quarantined, listed)
    }

    // MARK: Cleaning

    /// Deletes one chunk of a finished table's moved rows from its source; drops the source table
    /// once empty, then marks the table cleaned. Every transaction writes one file: the chunks and
    /// the drop write only the source, the final mark only the target. (In WAL mode a transaction
    /// across files commits file by file: a failure between the two would have left the target
    /// marked cleaned with the source table never dropped.) The mark comes last and is idempotent:
    /// a drop that committed without its mark is found at the next step or load.
    private func cleanChunk(_ mapping: ResolvedMapping, on db: Connection, budget: Double) throws(FerryError) -> StepReport {
        if !mapping.sourceHasRowid { return try cleanKeyedChunk(mapping, on: db, budget: budget) }
        if mapping.recordsMovedRows { return try cleanRecordedChunk(mapping, on: db, budget: budget) }
        let key = mapping.targetName.lowercased()
        let limit = fixedBatchRows ?? batchRows["clean:" + key] ?? 512
        let start = ContinuousClock.now
        var record = mapping.record
        let cursor = record.cursor ?? Int64.min
        let from = cleanedUpTo[key] ?? Int64.min
        try makeMovesDurable(record, on: db)
        if mapping.source.path != nil {
            // Attached by every use of the writer when available; cleanup needs it.
            try engine.attachRequiredSource(mapping.source, on: db)
        }
        if !record.cleanupChecked, let ahead = record.rowsMovedAhead, try mapping.sourceTableExists(on: db),
           try sqlite(db.tableExists(mapping.targetName)) {
            let checked = try countBeforeCleaning(mapping, record: record, expected: record.rowsMoved + record.rowsQuarantined + ahead,
                                                  budget: budget, start: start, on: db)
            guard checked else {
                return StepReport(kind: .cleanup, table: mapping.targetName, rowsMoved: 0, rowsQuarantined: 0, sourceRowsDeleted: 0,
                                  rowsLeft: 0, elapsed: ContinuousClock.now - start, tableFinished: false,
                                  allFinished: engine.migratingMappings.isEmpty)
            }
            record.cleanupChecked = true  // counted in full in this step: it goes on to delete
        }
        var cleanedTo: Int64?
        let othersUseSource = self.othersUseSource(of: mapping)
        let retires = cleanedUpTo[key] == nil && !othersUseSource && record.filter == nil && mapping.earlierFilters.isEmpty
            && retiresInOneStatement(mapping, record: record, chunkRows: limit)
        // Every row of the source table moved (no filter, nobody else reads it, the count above
        // found them all): retire the table in one statement, unless a row lies above the cursor.
        guard let retired = try retiringWholeTable(mapping, whole: retires, cursor: cursor, record: record, budget: budget, on: db) else {
            return Self.waitingReport(mapping, since: start)
        }
        var (deleted, sourceDone) = retired
        var chunked = false
        if !sourceDone, try mapping.sourceTableExists(on: db) {
            // Chunk after chunk while the app leaves the writer alone (see `runChunks`).
            chunked = true
            var low = from
            deleted = try runChunks(key: "clean:" + key, budget: budget, on: db) { limit throws(FerryError) in
                let hi: Int64? = try sqlite(db.scalar("""
                    SELECT max(r) FROM (SELECT \(mapping.sourceRowid) AS r FROM \(mapping.sourceRangeScan)
                    WHERE \(mapping.sourceRowid) > ?1 AND \(mapping.sourceRowid) <= ?2 AND \(mapping.filterCondition) ORDER BY \(mapping.sourceRowid) LIMIT ?3)
                    """, [.integer(low), .integer(cursor), .integer(Int64(limit))]))
                if let hi {
                    try sqlite(db.execute("DELETE FROM \(mapping.sourceRangeScan) WHERE \(mapping.rangeCondition)", [.integer(low), .integer(hi)]))
                    cleanedTo = hi
                    low = hi
                    return (db.changes, 0, false)
                }
                try dropSourceIfEmpty(mapping, othersUseSource: othersUseSource, on: db)
                sourceDone = true
                return (0, 0, true)
            }.moved
        } else if !sourceDone {
            // Dropped by an earlier step whose mark did not commit.
            sourceDone = true
        }
        // Only a committed chunk counts as cleaned: after a failed commit (I/O error, disk full)
        // the next step deletes the same range again.
        if let cleanedTo { cleanedUpTo[key] = cleanedTo }
        if sourceDone {
            try db.transaction(.immediate) { () throws(FerryError) in try MigrationState.markSourceCleaned(&record, on: db) }
        }
        let elapsed = (ContinuousClock.now - start).seconds
        if !chunked { adapt(key: "clean:" + key, limit: limit, moved: deleted, elapsed: elapsed, budget: budget) }
        if sourceDone { engine.updateRecord(record) }
        var report = StepReport(kind: .cleanup, table: mapping.targetName, rowsMoved: 0, rowsQuarantined: 0,
                                sourceRowsDeleted: deleted, rowsLeft: 0, elapsed: .seconds(elapsed), tableFinished: false,
                                allFinished: engine.migratingMappings.isEmpty)
        report.sourceCleaned = sourceDone
        return report
    }

    /// True when another migrating or uncleaned mapping reads `mapping`'s source table (its table
    /// is then never dropped by `mapping`'s cleanup).
    func othersUseSource(of mapping: ResolvedMapping) -> Bool {
        let key = mapping.targetName.lowercased()
        return (engine.migratingMappings + engine.mappingsAwaitingCleanup).contains {
            $0.targetName.lowercased() != key && $0.source.id == mapping.source.id
                && $0.sourceShape.name.lowercased() == mapping.sourceShape.name.lowercased()
        }
    }

    /// Where the retirement of a finished table's source table off the writer stands in this step.
    enum Retirement {
        /// None for this table (none runs on its file): cleanup goes on in the step.
        case none
        /// It runs (this table's, or another's on the same file, whose lock it holds): the step
        /// reports nothing done (`waitingReport`).
        case running
        /// It ended with the table retired, holding this many rows.
        case retired(rows: Int)
        /// It ended without a change: a row lies above the cursor (cleanup goes on row by row).
        case declined
    }

    /// Retires `mapping`'s source table in one statement when `whole` (every row moved, nothing else
    /// reads it): off the writer for a source of its own file (`retirement(of:)`), on it for a
    /// source in the target file (`retireOnWriter`). Nil while a retirement runs on the table's
    /// file (the step reports nothing done); otherwise the rows retired and whether it retired (not
    /// when it declined or did not apply: cleanup then deletes chunk by chunk).
    func retiringWholeTable(_ mapping: ResolvedMapping, whole: Bool, cursor: Int64?, record: TableRecord, budget: Double,
                            on db: Connection) throws(FerryError) -> (rows: Int, retired: Bool)? {
        switch try retirement(of: mapping, startingIf: whole, cursor: cursor, record: record, budget: budget, on: db) {
        case .running: return nil
        case .retired(let rows): return (rows, true)
        case .none where whole: return try retireOnWriter(mapping, cursor: cursor, record: record, on: db)
        case .none, .declined: return (0, false)
        }
    }

    /// Whether a fully moved source table may be retired in one `DROP TABLE`: always off the writer
    /// (a source of its own file: the retirer's connection drops it, and nothing the app does waits
    /// for that file); on the writer (a source in the target file) only while it holds no more rows
    /// than one cleanup chunk. A drop costs the table's size (its pages freed, zeroed under
    /// `secure_delete`), and on the writer every app write would wait for it: 1.3 s for 1M rows of
    /// a SQLCipher file. A larger one is deleted in budgeted chunks and dropped once empty.
    func retiresInOneStatement(_ mapping: ResolvedMapping, record: TableRecord, chunkRows: Int) -> Bool {
        if mapping.source.path != nil { return true }
        return record.rowsMoved + record.rowsQuarantined + max(0, record.rowsMovedAhead ?? 0) <= Int64(chunkRows)
    }

    /// Retires `mapping`'s source table on the writer (a source in the target file, which the
    /// retirer does not serve), counting its rows in the same transaction. Returns the rows and
    /// whether it retired (not when a row lies above the cursor).
    func retireOnWriter(_ mapping: ResolvedMapping, cursor: Int64?, record: TableRecord, on db: Connection) throws(FerryError) -> (rows: Int, retired: Bool) {
        guard try mapping.sourceTableExists(on: db) else { return (0, false) }
        let retirement = SourceTableRetirement(mapping, cursor: cursor, keepsTable: engine.keepsSourceTables)
        return try db.transaction(.immediate) { () throws(FerryError) in
            let rows = try Self.retiredRowCount(mapping, record: record, on: db)
            return try retirement.run(on: db) ? (rows, true) : (0, false)
        }
    }

    /// The retirement of `mapping`'s source table: the one running or ended, or, when none and
    /// `condition` holds (every row moved, nothing else reads the table) for a source of its own
    /// file, one started now. Waits for it at most `budget` (until it ends, with fixed batches).
    func retirement(of mapping: ResolvedMapping, startingIf condition: Bool, cursor: Int64?, record: TableRecord, budget: Double,
                    on db: Connection) throws(FerryError) -> Retirement {
        guard let retirer else { return .none }
        let key = mapping.targetName.lowercased()
        if !retirer.hasJob(for: key) {
            if retirer.isRetiring(schema: mapping.source.schema) { return .running }
            guard condition, mapping.source.path != nil, try mapping.sourceTableExists(on: db) else { return .none }
            retirer.start(SourceRetirer.Job(schema: mapping.source.schema,
                                            retirement: SourceTableRetirement(mapping, cursor: cursor, keepsTable: engine.keepsSourceTables),
                                            rows: try Self.retiredRowCount(mapping, record: record, on: db)), for: key)
        }
        return try collectRetirement(key, budget: budget)
    }

    /// A cleanup step's report while a retirement runs: nothing done yet.
    static func waitingReport(_ mapping: ResolvedMapping, since start: ContinuousClock.Instant) -> StepReport {
        StepReport(kind: .cleanup, table: mapping.targetName, rowsMoved: 0, rowsQuarantined: 0, sourceRowsDeleted: 0,
                   rowsLeft: 0, elapsed: ContinuousClock.now - start, tableFinished: false, allFinished: false)
    }

    /// The outcome of the retirement of `key`'s source table, waited for at most `budget` (until
    /// it ends, with fixed batches): `.running` while it runs, `.none` without a retirer.
    /// - Throws: the retirement's failure (nothing changed; the next step tries again).
    func collectRetirement(_ key: String, budget: Double) throws(FerryError) -> Retirement {
        guard let retirer else { return .none }
        switch retirer.collect(key, waiting: fixedBatchRows == nil ? budget : nil) {
        case nil: return .running
        case .retired(let rows)?: return .retired(rows: rows)
        case .declined?: return .declined
        case .failed(let error)?: throw error
        }
    }

    /// The rows a retiring source table holds: the count cleanup checked them against (every moved,
    /// moved-ahead and quarantined row), or, when none was checked (an older catalog, a table the
    /// app dropped), a count of the table, which reads every page as the DROP does.
    static func retiredRowCount(_ mapping: ResolvedMapping, record: TableRecord, on db: Connection) throws(FerryError) -> Int {
        if record.cleanupChecked, let ahead = record.rowsMovedAhead { return Int(record.rowsMoved + record.rowsQuarantined + ahead) }
        return try sqlite(db.scalar("SELECT count(*) FROM \(mapping.qualifiedSource)", as: Int.self)) ?? 0
    }

    /// No moved row is left in the source: its table is dropped when it is empty, no other mapping
    /// reads it and source tables are not kept.
    func dropSourceIfEmpty(_ mapping: ResolvedMapping, othersUseSource: Bool, on db: Connection) throws(FerryError) {
        let empty = try sqlite(db.scalar("SELECT count(*) FROM (SELECT 1 FROM \(mapping.qualifiedSource) LIMIT 1)", as: Int.self)) == 0
        if empty && !othersUseSource && !engine.keepsSourceTables {
            try sqlite(db.execute("DROP TABLE \(mapping.qualifiedSource)"))
        }
    }

    /// Before cleanup deletes anything from a source table, it counts, in budgeted chunks, the
    /// source rows its mapping matches now, and deletes only once that count equals the rows that
    /// moved (by the stepper, moved ahead by app writes, or quarantined). Cleanup deletes by the
    /// mapping's filter, so a filter whose meaning changed since the rows moved (an app-defined
    /// function or collation changed, a source edited behind Ferry's back) would delete rows that
    /// never reached the target: then nothing is deleted and the step fails with
    /// `FerryError.cleanupRefused`. (Checked once per table; a table dropped by the app, whose
    /// rows all go, is not checked.)
    /// Returns true once the count is complete and equal (recorded in the catalog).
    private func countBeforeCleaning(_ mapping: ResolvedMapping, record: TableRecord, expected: Int64, budget: Double,
                                     start: ContinuousClock.Instant, on db: Connection) throws(FerryError) -> Bool {
        let key = mapping.targetName.lowercased()
        // Counting reads only the rowid b-tree: chunks are large. Fixed (as a count, not a time)
        // when batches are fixed, so that a scenario's steps do not depend on the machine.
        let chunk = fixedBatchRows != nil ? Self.fixedCountRows : batchRows["count:" + key] ?? Self.fixedCountRows
        let (position, counted) = cleanupCounts[key] ?? (Int64.min, 0)
        let row = try sqlite(db.fetchOne("""
            SELECT max(r), count(*) FROM (SELECT \(mapping.sourceRowid) AS r FROM \(mapping.sourceRangeScan)
            WHERE \(mapping.sourceRowid) > ?1 AND \(mapping.sourceRowid) <= ?2 AND \(mapping.filterCondition) ORDER BY \(mapping.sourceRowid) LIMIT ?3)
            """, [.integer(position), .integer(record.cursor ?? Int64.min), .integer(Int64(chunk))]))
        let high = try sqlite(row?.get(0, as: Int64?.self)) ?? nil
        let found = try sqlite(row?.get(1, as: Int64.self)) ?? 0
        var record = record
        let complete = found < Int64(chunk)  // fewer rows than asked for: the count reached the cursor
        if let high, !complete {
            cleanupCounts[key] = (high, counted + found)
        } else {
            cleanupCounts[key] = nil
            let total = counted + found
            guard total == expected else {
                throw .cleanupRefused(table: mapping.targetName, reason: "\(total) source row(s) of \(mapping.sourceShape.name) match its mapping now, "
                    + "but \(expected) moved: the filter's meaning or the source changed since the rows moved")
            }
            try db.transaction(.immediate) { () throws(FerryError) in try MigrationState.markCleanupChecked(&record, on: db) }
            engine.updateRecord(record)
        }
        adapt(key: "count:" + key, limit: chunk, moved: Int(found), elapsed: (ContinuousClock.now - start).seconds, budget: budget)
        return complete
    }

    /// Rows per counting chunk before cleanup, with fixed batches (and the first chunk otherwise).
    static let fixedCountRows = 32_768

    /// Adapts the batch size so a batch takes about 70% of the budget.
    func adapt(key: String, limit: Int, moved: Int, elapsed: Double, budget: Double) {
        guard moved > 0, elapsed > 0 else { return }
        let perRow = elapsed / Double(moved)
        let ideal = Int(budget * 0.7 / perRow)
        let next = min(max(ideal, 16), limit * 2, 100_000)
        batchRows[key] = elapsed > budget ? max(16, min(next, limit / 2)) : next
    }
}
