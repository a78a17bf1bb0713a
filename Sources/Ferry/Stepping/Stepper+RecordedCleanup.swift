import FerrySQLite

extension Stepper {
    /// Deletes one chunk of a finished table's moved rows from its source, for a table whose
    /// batches recorded the rows they accounted for (`ResolvedMapping.recordsMovedRows`): exactly
    /// those rows, batch after batch, and never a row the filter matches now but no batch moved
    /// (a filter whose value changed since, through the clock, a function or an edited source).
    /// Such a row stays in the source, which is then kept.
    ///
    /// Before the first delete, the record is checked against the counts the batches kept in the
    /// same transactions (moved, quarantined, moved ahead): a record that does not account for
    /// them refuses cleanup (`FerryError.cleanupRefused`) and deletes nothing. No filter is
    /// evaluated: the check reads the target alone.
    /// The same transactions as `cleanChunk`: the chunks write only the source, the mark only the
    /// target, last. Deleting a recorded row again deletes nothing, so a chunk that did not commit
    /// is simply deleted again.
    func cleanRecordedChunk(_ mapping: ResolvedMapping, on db: Connection, budget: Double) throws(FerryError) -> StepReport {
        let key = mapping.targetName.lowercased()
        let start = ContinuousClock.now
        var record = mapping.record
        try makeMovesDurable(record, on: db)
        if mapping.source.path != nil { try engine.attachRequiredSource(mapping.source, on: db) }
        if !record.cleanupChecked {
            let recorded = try MigrationState.movedRowCount(of: record.target, on: db)
            let expected = record.rowsMoved + record.rowsQuarantined + (record.rowsMovedAhead ?? 0)
            guard recorded == expected else {
                throw .cleanupRefused(table: mapping.targetName, reason: "the batches recorded \(recorded) moved source row(s) of "
                    + "\(mapping.sourceShape.name), but \(expected) moved: the migration's record is incomplete, so nothing is deleted")
            }
            try db.transaction(.immediate) { () throws(FerryError) in try MigrationState.markCleanupChecked(&record, on: db) }
            engine.updateRecord(record)
        }
        var deleted = 0
        var sourceDone = true  // unless the table is there: dropped by an earlier step whose mark did not commit
        if try mapping.sourceTableExists(on: db) {
            sourceDone = false
            let othersUseSource = self.othersUseSource(of: mapping)
            let delete = HashedSQL("DELETE FROM \(mapping.qualifiedSource) WHERE \(mapping.sourceRowid) = ?1")
            var position = recordedCleanedTo[key] ?? RecordedCleanupPosition()
            var cleanedTo: RecordedCleanupPosition?
            deleted = try runChunks(key: "clean:" + key, budget: budget, on: db) { limit throws(FerryError) in
                let statement = try sqlite(db.cachedStatement(delete))
                var taken = 0, changes = 0
                while taken < limit, let entry = try MigrationState.movedRows(of: record.target, from: position.batch, on: db) {
                    if entry.batch != position.batch { position = RecordedCleanupPosition(batch: entry.batch, offset: 0) }
                    let rowids = entry.rows.rowids[position.offset...].prefix(limit - taken)
                    for rowid in rowids {
                        try sqlite(statement.execute([.integer(rowid)]))
                        changes += db.changes
                    }
                    taken += rowids.count
                    position.offset += rowids.count
                    if position.offset == entry.rows.rowids.count { position = RecordedCleanupPosition(batch: entry.batch + 1, offset: 0) }
                }
                guard taken > 0 else {
                    try dropSourceIfEmpty(mapping, othersUseSource: othersUseSource, on: db)
                    sourceDone = true
                    return (0, 0, true)
                }
                cleanedTo = position
                return (changes, 0, false)
            }.moved
            // Only a committed chunk counts as cleaned.
            if let cleanedTo { recordedCleanedTo[key] = cleanedTo }
        }
        if sourceDone {
            try db.transaction(.immediate) { () throws(FerryError) in try MigrationState.markSourceCleaned(&record, on: db) }
            engine.updateRecord(record)
        }
        var report = StepReport(kind: .cleanup, table: mapping.targetName, rowsMoved: 0, rowsQuarantined: 0,
                                sourceRowsDeleted: deleted, rowsLeft: 0, elapsed: ContinuousClock.now - start, tableFinished: false,
                                allFinished: engine.migratingMappings.isEmpty)
        report.sourceCleaned = sourceDone
        return report
    }
}

/// Where the cleanup of a table that records its moves stands: the recorded batch it deletes
/// next, and how many of that batch's rows it deleted already.
struct RecordedCleanupPosition: Sendable, Equatable {
    var batch: Int64 = 0
    var offset = 0
}
