import FerrySQLite

/// Moving: one batch after another of a migrating table, each in the step's transaction of the
/// target file (see `Stepper`), the same code for every kind of source (`SourceCursor`).
extension Stepper {
    /// Moves batches of one migrating table.
    func moveBatch(_ mapping: ResolvedMapping, on db: Connection, _ context: StepContext) throws(FerryError) -> StepReport {
        if mapping.source.path != nil {
            // Attached by every use of the writer when available; a batch needs it.
            try engine.attacher.attachRequiredSource(mapping.source, on: db)
        }
        let cursor = SourceCursor(mapping)
        var record = mapping.record
        let work = try retryingAfterConflict(mapping) { () throws(FerryError) in
            record = mapping.record  // as the step began (a retry follows a rollback)
            return try runChunks(.move, of: mapping.targetName, context, writesMainOnly: true, on: db) { limit throws(FerryError) in
                let batch: SourceBatch?
                do throws(FerryError) {
                    // Reads only the source: an I/O failure here is the source's.
                    batch = try cursor.nextBatch(of: record, rows: limit, on: db)
                } catch {
                    throw mapping.source.path.map { SourceAttacher.sourceError(error, path: engine.paths.resolvedPath($0)) } ?? error
                }
                guard let batch else {
                    // No matching row left beyond the cursor: the table is complete. This is an
                    // explicit check that no matching source row is left unmoved, never an
                    // inference from an empty or ignored insert.
                    try finishTable(mapping, cursor, record: &record, on: db)
                    return (0, 0, true)
                }
                let copied = try FerryMove.guarding(on: db) { () throws(FerryError) in try copy(batch, cursor, on: db) }
                // The moved-set rows `advance` prunes lie in this batch (app writes move pending
                // rows only, beyond the cursor): looked up only when the moved set may hold some.
                let accounted = try copied.accounted.map { rows throws(FerryError) in
                    cursor.movedRows(copied.movedSetMayHoldRows
                        ? rows + (try cursor.movedAheadRows(where: cursor.movedSetEntries(through: batch.last), on: db)) : rows)
                }
                try cursor.advance(&record, past: batch, moved: copied.moved, quarantined: copied.quarantined, accounted: accounted, on: db)
                return (copied.moved, copied.quarantined, false)
            }
        }
        if !db.isInTransaction { engine.raiseCursorFloor(mapping, committed: record) }
        return moveReport(mapping, record: record, work)
    }

    /// The table has no matching row left: finished, and the app's triggers on it read as it
    /// wrote them again.
    func finishTable(_ mapping: ResolvedMapping, _ cursor: SourceCursor, record: inout TableRecord, on db: Connection) throws(FerryError) {
        let accounted = mapping.recordsMovedRows ? cursor.movedRows(try cursor.movedAheadRows(where: "1", on: db)) : nil
        try MigrationState.finish(&record, accounted: accounted, on: db)
        try AppTriggerGuard.restore(target: mapping.targetName, on: db)
        try AppTriggerWrites.sync(on: db)
    }

    /// The report of a step that moved rows of `mapping` (`record` as it left it).
    func moveReport(_ mapping: ResolvedMapping, record: TableRecord, _ work: (moved: Int, quarantined: Int, finished: Bool, elapsed: Duration)) -> StepReport {
        engine.updateRecord(record)
        let ahead = max(0, record.rowsMovedAhead ?? 0)
        let left = max(0, (record.rowsEstimate ?? 0) - record.rowsMoved - record.rowsQuarantined - ahead)
        var report = StepReport(kind: .move, table: mapping.targetName, rowsMoved: work.moved, rowsQuarantined: work.quarantined,
                                sourceRowsDeleted: 0, rowsLeft: work.finished ? 0 : left, elapsed: work.elapsed,
                                tableFinished: work.finished, allFinished: engine.migratingMappings.isEmpty)
        // The rows moved ahead by the app's writes that this batch (or the table's end) accounted for.
        report.rowsMovedAhead = Int(max(0, ahead - max(0, mapping.record.rowsMovedAhead ?? 0)))
        return report
    }

    /// Copies the batch's pending rows (the matching rows of its span not in the moved set) into
    /// the target. Set-based; on a constraint conflict it falls back to row by row and sets
    /// conflicting rows aside (see `copyingSetBased`).
    ///
    /// The moved set rarely holds a row of the batch (only rows an app write moved ahead of the
    /// stepper): when it holds none, the copy leaves out the `NOT IN <moved set>` test, which
    /// otherwise costs a probe per row (about a third of the copy on a table without secondary
    /// indexes, measured with ferry-bench).
    ///
    /// For a mapping that records its moves (`ResolvedMapping.recordsMovedRows`), also returns the
    /// source rows the copy accounted for, as the copy itself decided them: the set-based copy's
    /// filter term records each row it matches (`ResolvedMapping.filterCondition(recording:)`), row
    /// by row records the rows it listed. (A matched row the `NOT IN` test then left out is in the
    /// moved set, which `MigrationState.advance` adds to the record anyway.)
    private func copy(_ batch: SourceBatch, _ cursor: SourceCursor, on db: Connection) throws(FerryError)
        -> (moved: Int, quarantined: Int, accounted: [(identity: Value, digest: UInt64)]?, movedSetMayHoldRows: Bool) {
        let mapping = cursor.mapping
        let movedSetMayHoldRows = try cursor.movedSetMayHoldRows(of: batch.span, on: db)
        let recorder = mapping.recordsMovedRows ? try movedRowRecorder(on: db) : nil
        let (condition, arguments) = cursor.matching(batch.span, recording: recorder != nil, pendingOnly: movedSetMayHoldRows)
        var listed: [(identity: Value, digest: UInt64)]?
        let copied = try copyingSetBased(mapping, on: db, { rollingBack throws(FerryError) in
            recorder?.reset()
            try sqlite(db.execute(mapping.insertSelectHead(rollingBack: rollingBack) + " WHERE " + condition, .positional(arguments)))
        }, rowByRow: { () throws(FerryError) in
            let rows = try copyRowByRow(batch, cursor, on: db)
            listed = rows.listed
            return (rows.moved, rows.quarantined)
        })
        guard let recorder else { return (copied.moved, copied.quarantined, nil, movedSetMayHoldRows) }
        return (copied.moved, copied.quarantined, listed ?? recorder.take().map { ($0.identity, $0.digest) }, movedSetMayHoldRows)
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

    /// Copies the batch's pending rows one by one, setting conflicting ones aside; returns the
    /// counts and the rows it listed (each moved or quarantined), with their digests.
    private func copyRowByRow(_ batch: SourceBatch, _ cursor: SourceCursor, on db: Connection) throws(FerryError)
        -> (moved: Int, quarantined: Int, listed: [(identity: Value, digest: UInt64)]) {
        let mapping = cursor.mapping
        let (condition, arguments) = cursor.matching(batch.span, pendingOnly: true)
        let listed: [(identity: Value, digest: UInt64)] = try sqlite(db.fetchAll("""
            SELECT \(mapping.sourceIdentity), \(RowDigest.function)(\(mapping.sourceDigestArguments)) FROM \(cursor.scan)
            WHERE \(condition) ORDER BY \(mapping.sourceOrder)
            """, .positional(arguments))).map { row throws(FerryError) in (row[0], UInt64(bitPattern: try sqlite(row.column(1)))) }
        let insertOne = mapping.insertSelectHead() + " WHERE \(mapping.sourceRow(identifiedBy: "?1"))"
        var moved = 0
        var quarantined = 0
        for (identity, _) in listed {
            do {
                try db.savepoint { () throws(FerryError) in try sqlite(db.execute(insertOne, .positional([identity]))) }
                moved += 1
            } catch where FerryMove.isUniquenessConflict(error) {
                try Quarantine.record(mapping, identity: identity, reason: "\(error)", on: db)
                quarantined += 1
            }
        }
        return (moved, quarantined, listed)
    }
}
