import FerrySQLite
import Foundation

/// Batches and cleanup of a source `WITHOUT ROWID`: the same transactions as for a rowid source
/// (see `Stepper`), in primary-key order instead of rowid order.
///
/// The key cursor is the row key of the first source row not passed yet (NULL once every row is):
/// a batch takes the matching rows from it up to the `n`-th, `hi`, moves them, and sets the
/// cursor to the first source row after `hi`, in one transaction of the target file. Keys are
/// compared under the collation that makes the primary key unique, so no two rows tie.
extension Stepper {
    /// Moves one batch of a table whose source has no rowid.
    func moveKeyedBatch(_ mapping: ResolvedMapping, on db: Connection, budget: Double) throws(FerryError) -> StepReport {
        if mapping.source.path != nil { try engine.attachRequiredSource(mapping.source, on: db) }
        var record = mapping.record
        let work = try retryingAfterConflict(mapping) { () throws(FerryError) in
            record = mapping.record  // as the step began (a retry follows a rollback)
            return try runChunks(key: mapping.targetName.lowercased(), budget: budget, writesMainOnly: true, on: db) { limit throws(FerryError) in
                var range: (from: [UInt8], to: [UInt8], after: [UInt8]?)?
                if let from = record.keyCursor {
                    do throws(FerryError) {
                        // Reads only the source: an I/O failure here is the source's.
                        let matching = "\(mapping.sourceKeyTuple) >= (\(mapping.keyParts(of: "?1"))) AND \(mapping.filterCondition)"
                        if let to = try nthKey(mapping, where: matching, n: limit, arguments: [.blob(from)], on: db) {
                            let after: [UInt8]? = try sqlite(db.scalar(
                                "SELECT \(mapping.sourceIdentity) FROM \(mapping.qualifiedSource) WHERE \(mapping.sourceKeyTuple) > (\(mapping.keyParts(of: "?1"))) "
                                    + "ORDER BY \(mapping.sourceOrder) LIMIT 1", .positional([.blob(to)])))
                            range = (from, to, after)
                        }
                    } catch {
                        throw mapping.source.path.map { MigrationEngine.sourceError(error, path: engine.resolvedPath($0)) } ?? error
                    }
                }
                guard let range else {
                    // No matching row from the cursor on: the table is complete (an explicit check,
                    // as for a rowid source).
                    try finishTable(mapping, record: &record, on: db)
                    return (0, 0, true)
                }
                let copied = try FerryMove.guarding(on: db) { () throws(FerryError) in
                    try copyKeyRange(mapping, from: range.from, through: range.to, on: db)
                }
                let passed = "EXISTS (SELECT 1 FROM \(mapping.qualifiedSource) WHERE \(mapping.sourceRow(identifiedBy: "source_rowid")) "
                    + "AND \(mapping.sourceKeyTuple) <= (\(mapping.keyParts(of: Self.blobLiteral(range.to)))))"
                // The moved-set rows `advance` prunes join the batch's record (see `moveBatch`).
                let accounted = try copied.accounted.map { rows throws(FerryError) in
                    MovedRows(keyed: copied.movedSetHadRows ? rows + (try movedAheadKeys(mapping, where: passed, on: db)) : rows)
                }
                try MigrationState.advance(&record, toKey: range.after, passed: passed, moved: copied.moved, quarantined: copied.quarantined,
                                           accounted: accounted, on: db)
                return (copied.moved, copied.quarantined, false)
            }
        }
        if !db.isInTransaction { engine.raiseCursorFloor(mapping, committed: record) }
        return moveReport(mapping, record: record, work)
    }

    /// The row key of the `n`-th source row (in key order) that meets `condition`, or of the last
    /// one when fewer do; nil when none does.
    func nthKey(_ mapping: ResolvedMapping, where condition: String, n: Int, arguments values: [Value], on db: Connection) throws(FerryError) -> [UInt8]? {
        let arguments = StatementArguments.positional(values)
        let select = "SELECT \(mapping.sourceIdentity) FROM \(mapping.qualifiedSource) WHERE \(condition) ORDER BY "
        if let key: [UInt8] = try sqlite(db.scalar(select + "\(mapping.sourceOrder) LIMIT 1 OFFSET \(max(0, n - 1))", arguments)) {
            return key
        }
        return try sqlite(db.scalar(select + mapping.sourceKeyColumns.map { "\($0) DESC" }.joined(separator: ", ") + " LIMIT 1", arguments))
    }

    /// Copies the pending matching source rows with key in [`from`, `through`] into the target;
    /// on a uniqueness conflict, row by row, setting conflicting rows aside (as `copyRange`). For a
    /// mapping that records its moves, also returns the rows it accounted for, by key, with their
    /// digests (as the copy decided them: see `copyRange`).
    private func copyKeyRange(_ mapping: ResolvedMapping, from: [UInt8], through: [UInt8], on db: Connection) throws(FerryError)
        -> (moved: Int, quarantined: Int, accounted: [(key: [UInt8], digest: UInt64)]?, movedSetHadRows: Bool) {
        let recorder = mapping.recordsMovedRows ? try movedRowRecorder(on: db) : nil
        let range = "\(mapping.sourceKeyTuple) >= (\(mapping.keyParts(of: "?1"))) AND \(mapping.sourceKeyTuple) <= (\(mapping.keyParts(of: "?2"))) "
        var condition = range + "AND \(mapping.filterCondition(recording: recorder != nil))"
        var listing = range + "AND \(mapping.filterCondition)"
        let movedSetHasRows = try MigrationState.hasMovedRows(target: mapping.targetName, on: db)
        if movedSetHasRows {
            let notMoved = " AND \(mapping.sourceIdentity) NOT IN (\(MigrationState.movedRowidsSQL(target: mapping.targetName)))"
            condition += notMoved
            listing += notMoved
        }
        let arguments = StatementArguments.positional([.blob(from), .blob(through)])
        var listed: [(key: [UInt8], digest: UInt64)]?
        let copied = try copyingSetBased(mapping, on: db, { rollingBack throws(FerryError) in
            recorder?.reset()
            try sqlite(db.execute(mapping.insertSelectHead(rollingBack: rollingBack) + " WHERE " + condition, arguments))
        }, rowByRow: { () throws(FerryError) in
            let rows: [(key: [UInt8], digest: UInt64)] = try sqlite(db.fetchAll(
                "SELECT \(mapping.sourceIdentity), \(RowDigest.function)(\(mapping.sourceDigestArguments)) FROM \(mapping.qualifiedSource) "
                    + "WHERE \(listing) ORDER BY \(mapping.sourceOrder)", arguments))
                .map { row throws(FerryError) in (try sqlite(row.get(0)), UInt64(bitPattern: try sqlite(row.get(1)))) }
            listed = rows
            let insertOne = mapping.insertSelectHead() + " WHERE \(mapping.sourceRow(identifiedBy: "?1"))"
            var moved = 0
            var quarantined = 0
            for (key, _) in rows {
                do throws(FerryError) {
                    try db.savepoint { () throws(FerryError) in try sqlite(db.execute(insertOne, .positional([.blob(key)]))) }
                    moved += 1
                } catch where FerryMove.isUniquenessConflict(error) {
                    try Quarantine.record(mapping, identity: .blob(key), reason: "\(error)", on: db)
                    quarantined += 1
                }
            }
            return (moved, quarantined)
        })
        guard let recorder else { return (copied.moved, copied.quarantined, nil, movedSetHasRows) }
        let accounted = listed ?? recorder.take().compactMap { entry -> (key: [UInt8], digest: UInt64)? in
            if case .blob(let key) = entry.identity { (key, entry.digest) } else { nil }
        }
        return (copied.moved, copied.quarantined, accounted, movedSetHasRows)
    }

    // MARK: Cleaning

    /// Deletes one chunk of a finished table's moved rows from its source without rowid, or
    /// retires the source; the same rules and transactions as `cleanChunk` (count first, one file
    /// per transaction, the mark last), in key order.
    func cleanKeyedChunk(_ mapping: ResolvedMapping, on db: Connection, budget: Double) throws(FerryError) -> StepReport {
        if mapping.recordsMovedRows { return try cleanRecordedChunk(mapping, on: db, budget: budget) }
        let key = mapping.targetName.lowercased()
        let limit = fixedBatchRows ?? batchRows["clean:" + key] ?? 512
        let start = ContinuousClock.now
        var record = mapping.record
        var state = keyedCleanup[key] ?? (nil, nil)
        let begun = state.cleanedTo != nil  // a chunk was deleted in this process
        try makeMovesDurable(record, on: db)
        if mapping.source.path != nil { try engine.attachRequiredSource(mapping.source, on: db) }
        // The rows the migration passed: before the key cursor (every row once it is NULL).
        var passed = mapping.filterCondition
        var passedArguments: [Value] = []
        if let cursor = record.keyCursor {
            passed = "\(mapping.sourceKeyTuple) < (\(mapping.keyParts(of: "?1"))) AND " + passed
            passedArguments = [.blob(cursor)]
        }
        let report = { (deleted: Int, done: Bool) in
            var report = StepReport(kind: .cleanup, table: mapping.targetName, rowsMoved: 0, rowsQuarantined: 0, sourceRowsDeleted: deleted,
                                    rowsLeft: 0, elapsed: ContinuousClock.now - start, tableFinished: false,
                                    allFinished: self.engine.migratingMappings.isEmpty)
            report.sourceCleaned = done
            return report
        }
        if !record.cleanupChecked, let ahead = record.rowsMovedAhead, try mapping.sourceTableExists(on: db),
           try sqlite(db.tableExists(mapping.targetName)) {
            // Count the matching source rows before deleting any (see `countBeforeCleaning`).
            let chunk = fixedBatchRows != nil ? Self.fixedCountRows : batchRows["count:" + key] ?? Self.fixedCountRows
            var condition = passed
            var arguments = passedArguments
            if let position = state.counted?.position {
                condition = "\(mapping.sourceKeyTuple) > (\(mapping.keyParts(of: "?\(arguments.count + 1)"))) AND " + condition
                arguments.append(.blob(position))
            }
            let found = try sqlite(db.scalar("SELECT count(*) FROM (SELECT 1 FROM \(mapping.qualifiedSource) WHERE \(condition) LIMIT \(chunk))",
                                             .positional(arguments), as: Int64.self)) ?? 0
            let counted = (state.counted?.count ?? 0) + found
            if found == Int64(chunk) {
                state.counted = (try nthKey(mapping, where: condition, n: chunk, arguments: arguments, on: db), counted)
                keyedCleanup[key] = state
                adapt(key: "count:" + key, limit: chunk, moved: Int(found), elapsed: (ContinuousClock.now - start).seconds, budget: budget)
                return report(0, false)
            }
            state.counted = nil
            keyedCleanup[key] = state
            let expected = record.rowsMoved + record.rowsQuarantined + ahead
            guard counted == expected else {
                throw .cleanupRefused(table: mapping.targetName, reason: "\(counted) source row(s) of \(mapping.sourceShape.name) match its mapping now, "
                    + "but \(expected) moved: the filter's meaning or the source changed since the rows moved")
            }
            try db.transaction(.immediate) { () throws(FerryError) in try MigrationState.markCleanupChecked(&record, on: db) }
            engine.updateRecord(record)
        }
        let othersUseSource = self.othersUseSource(of: mapping)
        let retires = !begun && !othersUseSource && record.filter == nil && mapping.earlierFilters.isEmpty && record.keyCursor == nil
            && retiresInOneStatement(mapping, record: record, chunkRows: limit)
        // Every row of the source table moved: retire it in one statement (see `cleanChunk`). The
        // key cursor passed every row: no row can lie above it (no cursor to check).
        guard let retired = try retiringWholeTable(mapping, whole: retires, cursor: nil, record: record, budget: budget, on: db) else {
            return Self.waitingReport(mapping, since: start)
        }
        var (deleted, sourceDone) = retired
        var cleanedTo: [UInt8]?
        var chunked = false
        if !sourceDone, try mapping.sourceTableExists(on: db) {
            // Chunk after chunk while the app leaves the writer alone (see `runChunks`).
            chunked = true
            var low = state.cleanedTo
            deleted = try runChunks(key: "clean:" + key, budget: budget, on: db) { limit throws(FerryError) in
                var condition = passed
                var arguments = passedArguments
                if let low {
                    condition = "\(mapping.sourceKeyTuple) > (\(mapping.keyParts(of: "?\(arguments.count + 1)"))) AND " + condition
                    arguments.append(.blob(low))
                }
                if let hi = try nthKey(mapping, where: condition, n: limit, arguments: arguments, on: db) {
                    try sqlite(db.execute("DELETE FROM \(mapping.qualifiedSource) WHERE \(condition) "
                        + "AND \(mapping.sourceKeyTuple) <= (\(mapping.keyParts(of: "?\(arguments.count + 1)")))", .positional(arguments + [.blob(hi)])))
                    cleanedTo = hi
                    low = hi
                    return (db.changes, 0, false)
                }
                try dropSourceIfEmpty(mapping, othersUseSource: othersUseSource, on: db)
                sourceDone = true
                return (0, 0, true)
            }.moved
        } else if !sourceDone {
            sourceDone = true  // dropped by an earlier step whose mark did not commit
        }
        // Only a committed chunk counts as cleaned.
        state = keyedCleanup[key] ?? (nil, nil)
        if let cleanedTo { state.cleanedTo = cleanedTo }
        keyedCleanup[key] = state
        if sourceDone {
            try db.transaction(.immediate) { () throws(FerryError) in try MigrationState.markSourceCleaned(&record, on: db) }
            engine.updateRecord(record)
        }
        if !chunked { adapt(key: "clean:" + key, limit: limit, moved: deleted, elapsed: (ContinuousClock.now - start).seconds, budget: budget) }
        return report(deleted, sourceDone)
    }

    /// `X'...'`: a row key inlined in SQL.
    static func blobLiteral(_ bytes: [UInt8]) -> String {
        "X'" + bytes.map { String(format: "%02X", $0) }.joined() + "'"
    }
}
