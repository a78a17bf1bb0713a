import FerrySQLite

/// Cleaning: once a table finished and no read uses its source any more, later steps delete its
/// moved rows from the source in budgeted chunks (or retire the source table whole) and mark it
/// cleaned; the same code for every kind of source (`SourceCursor`). A table that records its
/// moves is cleaned by its record instead (`cleanRecordedChunk`).
extension Stepper {
    /// Deletes one chunk of a finished table's moved rows from its source; drops the source table
    /// once empty, then marks the table cleaned. Every transaction writes one file: the chunks and
    /// the drop write only the source, the final mark only the target. (In WAL mode a transaction
    /// across files commits file by file: a failure between the two would have left the target
    /// marked cleaned with the source table never dropped.) The mark comes last and is idempotent:
    /// a drop that committed without its mark is found at the next step or load.
    func cleanChunk(_ mapping: ResolvedMapping, on db: Connection, _ context: StepContext) throws(FerryError) -> StepReport {
        if mapping.recordsMovedRows { return try cleanRecordedChunk(mapping, on: db, context) }
        let cursor = SourceCursor(mapping)
        let table = mapping.targetName
        let key = table.lowercased()
        let limit = fixedBatchRows ?? batchSizes[.clean, table: table] ?? 512
        let start = ContinuousClock.now
        var record = mapping.record
        let begun = cleanups[key]?.cleanedTo != nil  // a chunk was deleted in this process
        try makeMovesDurable(record, on: db)
        try attachSourceForCleanup(mapping, on: db)
        func report(deleted: Int, cleaned: Bool) -> StepReport {
            var report = StepReport(kind: .cleanup, table: table, rowsMoved: 0, rowsQuarantined: 0, sourceRowsDeleted: deleted,
                                    rowsLeft: 0, elapsed: ContinuousClock.now - start, tableFinished: false,
                                    allFinished: engine.migratingMappings.isEmpty)
            report.sourceCleaned = cleaned
            return report
        }
        if !record.cleanupChecked, let ahead = record.rowsMovedAhead, try mapping.sourceTableExists(on: db),
           try sqlite(db.tableExists(table)) {
            let expected = record.rowsMoved + record.rowsQuarantined + ahead
            // Counted in full in this step (and checked): it goes on to delete.
            guard try countBeforeCleaning(cursor, record: &record, expected: expected, context, since: start, on: db) else {
                return report(deleted: 0, cleaned: false)
            }
        }
        let othersUseSource = self.othersUseSource(of: mapping)
        let retires = !begun && !othersUseSource && record.filter == nil && mapping.earlierFilters.isEmpty && cursor.passedEverything(record)
            && retiresInOneStatement(mapping, record: record, chunkRows: limit)
        // Every row of the source table moved (no filter, nobody else reads it, the count above
        // found them all): retire the table in one statement, unless a row lies above the cursor.
        guard let retired = try retiringWholeTable(mapping, whole: retires, cursor: cursor.retirementCursor(record), record: record,
                                                   budget: context.budget, on: db) else {
            return Self.waitingReport(mapping, since: start)
        }
        var (deleted, sourceDone) = retired
        var cleanedTo: SourcePosition?
        var chunked = false
        if !sourceDone, try mapping.sourceTableExists(on: db) {
            // Chunk after chunk while the app leaves the writer alone (see `runChunks`), in the
            // rows the migration passed, from where this process's cleanup stands.
            chunked = true
            let passed = cursor.passed(record)
            var low = cleanups[key]?.cleanedTo
            deleted = try runChunks(.clean, of: table, context, on: db) { limit throws(FerryError) in
                let span = passed.after(low)
                if let high = try cursor.lastOfFirst(limit, in: span, on: db) {
                    let changes = try cursor.deleteMatching(in: span.through(high), on: db)
                    cleanedTo = high
                    low = high
                    return (changes, 0, false)
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
        if let cleanedTo { cleanups[key, default: CleanupProgress()].cleanedTo = cleanedTo }
        if sourceDone {
            try MigrationState.writingMain(on: db) { () throws(FerryError) in try MigrationState.markSourceCleaned(&record, on: db) }
            engine.updateRecord(record)
        }
        if !chunked {
            batchSizes.adapt(.clean, table: table, limit: limit, done: deleted, elapsed: ContinuousClock.now - start,
                             budget: context.budget)
        }
        return report(deleted: deleted, cleaned: sourceDone)
    }

    /// Before cleanup deletes anything from a source table, it counts, in budgeted chunks, the
    /// source rows its mapping matches now, and deletes only once that count equals the rows that
    /// moved (by the stepper, moved ahead by app writes, or quarantined). Cleanup deletes by the
    /// mapping's filter, so a filter whose meaning changed since the rows moved (an app-defined
    /// function or collation changed, a source edited behind Ferry's back) would delete rows that
    /// never reached the target: then nothing is deleted and the step fails with
    /// `FerryError.cleanupRefused`. (Checked once per table; a table dropped by the app, whose
    /// rows all go, is not checked.)
    /// Returns true once the count is complete and equal (recorded in the catalog and in `record`).
    private func countBeforeCleaning(_ cursor: SourceCursor, record: inout TableRecord, expected: Int64, _ context: StepContext,
                                     since start: ContinuousClock.Instant, on db: Connection) throws(FerryError) -> Bool {
        let table = cursor.mapping.targetName
        let key = table.lowercased()
        // Counting reads only the rowid b-tree (the primary key's, without rowid): chunks are large.
        // Fixed (as a count, not a time) when batches are fixed, so that a scenario's steps do not
        // depend on the machine.
        let chunk = fixedBatchRows != nil ? Self.fixedCountRows : batchSizes[.count, table: table] ?? Self.firstCountRows
        // Moved rows a same-file source lost to its own foreign key before cleanup are not
        // expected (`MigrationState.rowsRetiredEarly`); a count during which more went starts over.
        let retiredEarly = try MigrationState.rowsRetiredEarly(target: record.target, on: db)
        if cleanups[key]?.counted != nil, cleanups[key]?.countedRetiredEarly != retiredEarly { cleanups[key]?.counted = nil }
        let counted = cleanups[key]?.counted
        if counted == nil { cleanups[key, default: CleanupProgress()].countedRetiredEarly = retiredEarly }
        let (found, last) = try cursor.countFirst(chunk, in: cursor.passed(record).after(counted?.position), on: db)
        let total = (counted?.count ?? 0) + found
        defer {
            batchSizes.adapt(.count, table: table, limit: chunk, done: Int(found), elapsed: ContinuousClock.now - start,
                             budget: context.budget)
        }
        if found == Int64(chunk), let last {
            // As many rows as asked for: the count goes on from the last one at the next step.
            cleanups[key, default: CleanupProgress()].counted = (last, total)
            return false
        }
        cleanups[key, default: CleanupProgress()].counted = nil
        guard total == expected - retiredEarly else {
            throw .cleanupRefused(table: table, reason: "\(total) source row(s) of \(cursor.mapping.sourceShape.name) match its mapping now, "
                + "but \(expected - retiredEarly) moved and are still there: the filter's meaning or the source changed since the rows moved")
        }
        try MigrationState.writingMain(on: db) { () throws(FerryError) in try MigrationState.markCleanupChecked(&record, on: db) }
        engine.updateRecord(record)
        return true
    }

    /// Rows per counting chunk before cleanup, with fixed batches.
    static let fixedCountRows = 32_768
    /// Rows of the first counting chunk otherwise (the batch sizer has no rate for it yet): a cold
    /// count of 32,768 rows of a SQLCipher 3 source (1 KB pages, each decrypted) took 18.9 ms and
    /// held an app insert 18.6 ms against a 5 ms budget (`ferry-bench --matrix`, 1M rows); the
    /// sizer grows later chunks to the budget.
    static let firstCountRows = 8_192

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
    /// True when another migrating or uncleaned mapping reads `mapping`'s source table (its table
    /// is then never dropped by `mapping`'s cleanup).
    func othersUseSource(of mapping: ResolvedMapping) -> Bool {
        let key = mapping.targetName.lowercased()
        return (engine.migratingMappings + engine.mappingsAwaitingCleanup).contains {
            $0.targetName.lowercased() != key && $0.source.id == mapping.source.id
                && $0.sourceShape.name.lowercased() == mapping.sourceShape.name.lowercased()
        }
    }

    /// Attaches a source file of its own (every use of the writer attaches it when available;
    /// cleanup needs it), with the page cache of a connection that reads it
    /// (`MigrationEngine.cacheSize`) while cleanup deletes from it. The writer keeps a small cache for sources
    /// (`writingSourceCacheSize`: moves read a source once, in order), but a delete removes each
    /// row's entries from the source's secondary indexes in scattered order, and with 2 MB their
    /// pages were read again and again: deleting 150k of 300k rows through a scattered index in
    /// 62k-row chunks took 0.58-0.71 s with 2 MB, 0.21-0.35 s with 16 MB (SQLite 3.40, same file,
    /// alternating runs). Set until the source is attached again.
    func attachSourceForCleanup(_ mapping: ResolvedMapping, on db: Connection) throws(FerryError) {
        guard mapping.source.path != nil else { return }
        try engine.attacher.attachRequiredSource(mapping.source, on: db)
        try sqlite(db.execute("PRAGMA \(q(mapping.source.schema)).cache_size = \(MigrationEngine.cacheSize)"))
    }

    /// No moved row is left in the source: its table is dropped when it is empty, no other mapping
    /// reads it and source tables are not kept.
    func dropSourceIfEmpty(_ mapping: ResolvedMapping, othersUseSource: Bool, on db: Connection) throws(FerryError) {
        let empty = try sqlite(db.scalar("SELECT count(*) FROM (SELECT 1 FROM \(mapping.qualifiedSource) LIMIT 1)", as: Int.self)) == 0
        if empty && !othersUseSource && !engine.keepsSourceTables {
            try sqlite(db.execute("DROP TABLE \(mapping.qualifiedSource)"))
        }
    }
}
