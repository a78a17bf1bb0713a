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
    func cleanRecordedChunk(_ mapping: ResolvedMapping, on db: Connection, _ context: StepContext) throws(FerryError) -> StepReport {
        let key = mapping.targetName.lowercased()
        let start = ContinuousClock.now
        var record = mapping.record
        try makeMovesDurable(record, on: db)
        try attachSourceForCleanup(mapping, on: db)
        if !record.cleanupChecked {
            let recorded = try MigrationState.movedRowCount(of: record.target, on: db)
            let expected = record.rowsMoved + record.rowsQuarantined + (record.rowsMovedAhead ?? 0)
            guard recorded == expected else {
                throw .cleanupRefused(table: mapping.targetName, reason: "the batches recorded \(recorded) moved source row(s) of "
                    + "\(mapping.sourceShape.name), but \(expected) moved: the migration's record is incomplete, so nothing is deleted")
            }
            try MigrationState.writingMain(on: db) { () throws(FerryError) in try MigrationState.markCleanupChecked(&record, on: db) }
            engine.updateRecord(record)
        }
        var deleted = 0
        var sourceDone = true  // unless the table is there: dropped by an earlier step whose mark did not commit
        if try mapping.sourceTableExists(on: db) {
            sourceDone = false
            let othersUseSource = self.othersUseSource(of: mapping)
            // One statement per batch's slice: the rowids as a JSON array (`json_each`); a source
            // without rowid, a statement per row key (through its primary key).
            let delete = mapping.sourceHasRowid
                ? HashedSQL("DELETE FROM \(mapping.qualifiedSource) WHERE \(mapping.sourceRowid) IN (SELECT value FROM json_each(?1))")
                : HashedSQL("DELETE FROM \(mapping.qualifiedSource) WHERE \(mapping.sourceRow(identifiedBy: "?1"))")
            var position = cleanups[key]?.recorded ?? RecordedCleanupPosition()
            var cleanedTo: RecordedCleanupPosition?
            deleted = try runChunks(.clean, of: mapping.targetName, context, on: db) { limit throws(FerryError) in
                let statement = try sqlite(db.cachedStatement(delete))
                var taken = 0, changes = 0
                while taken < limit, let entry = try MigrationState.movedRows(of: record.target, from: position.batch, on: db) {
                    if entry.batch != position.batch { position = RecordedCleanupPosition(batch: entry.batch, offset: 0) }
                    if position.offset == 0 {
                        // Before the batch's first delete: its rows must be the rows that moved.
                        guard let offset = try deletedPrefix(of: entry, mapping, on: db) else {
                            position = RecordedCleanupPosition(batch: entry.batch + 1, offset: 0)  // cleaned before
                            continue
                        }
                        position.offset = offset
                    }
                    let end = min(entry.rows.count, position.offset + limit - taken)
                    if mapping.sourceHasRowid {
                        try sqlite(statement.execute([.text(Self.jsonArray(entry.rows.rowids[position.offset..<end]))]))
                        changes += db.changes
                    } else {
                        for key in entry.rows.keys[position.offset..<end] {
                            try sqlite(statement.execute([.blob(key)]))
                            changes += db.changes
                        }
                    }
                    taken += end - position.offset
                    position.offset = end
                    if position.offset == entry.rows.count { position = RecordedCleanupPosition(batch: entry.batch + 1, offset: 0) }
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
            if let cleanedTo { cleanups[key, default: CleanupProgress()].recorded = cleanedTo }
        }
        if sourceDone {
            try MigrationState.writingMain(on: db) { () throws(FerryError) in try MigrationState.markSourceCleaned(&record, on: db) }
            engine.updateRecord(record)
        }
        var report = StepReport(kind: .cleanup, table: mapping.targetName, rowsMoved: 0, rowsQuarantined: 0,
                                sourceRowsDeleted: deleted, rowsLeft: 0, elapsed: ContinuousClock.now - start, tableFinished: false,
                                allFinished: engine.migratingMappings.isEmpty)
        report.sourceCleaned = sourceDone
        return report
    }
}

extension Stepper {
    /// How many of a recorded batch's rows cleanup deleted already, checking that the source still
    /// holds the rows that moved: all of them present, their digests must add up to the recorded
    /// one; some present, they must be the last ones of the batch (cleanup deletes in order; the
    /// batch was checked before its first delete). Rows retired early (`MigrationState
    /// .retiredRows`: a same-file source's own foreign key) are accounted for by the digests they
    /// had when they went, and must stay gone. Nil when none is present (cleaned before).
    /// - Throws: `FerryError.cleanupRefused` when the source holds other rows (another file at the
    ///   source's path, rows edited or deleted behind Ferry's back): nothing more is deleted.
    func deletedPrefix(of entry: (batch: Int64, rows: MovedRows), _ mapping: ResolvedMapping, on db: Connection) throws(FerryError) -> Int? {
        let rows = entry.rows
        guard rows.count > 0 else { return nil }
        let retired = try MigrationState.retiredRows(of: rows, mapping.record, on: db)
        let expected = (count: rows.count - retired.count, digest: rows.digest &- retired.digest)
        let digest = "\(RowDigest.function)(\(mapping.sourceDigestArguments))"
        if mapping.sourceHasRowid {
            // The common case in one statement: every row present, digests adding up. The wrapping
            // sum of 64-bit digests is summed as two halves, which SQLite's integer sum cannot overflow.
            let summary = try sqlite(db.cachedStatement(HashedSQL("""
                SELECT count(*), ifnull(sum(d & 4294967295), 0), ifnull(sum((d >> 32) & 4294967295), 0)
                FROM (SELECT \(digest) AS d FROM \(mapping.qualifiedSource) WHERE \(mapping.sourceRowid) IN (SELECT value FROM json_each(?1)))
                """)).fetchOne([.text(Self.jsonArray(rows.rowids[...]))]))
            if let summary, case .integer(let count) = summary[0], case .integer(let low) = summary[1], case .integer(let high) = summary[2] {
                if count == 0 { return nil }
                if count == Int64(expected.count) {
                    guard UInt64(bitPattern: low) &+ (UInt64(bitPattern: high) << 32) == expected.digest else {
                        throw Self.notTheRowsThatMoved(entry, mapping, present: Int(count))
                    }
                    return 0
                }
            }
        }
        // Row by row: which rows are present (for a source without rowid, always; for a rowid
        // source when some are gone), to tell a batch cleaned in part (by an earlier process) from
        // a source that holds other rows.
        let lookup = try sqlite(db.cachedStatement(HashedSQL("SELECT \(digest) FROM \(mapping.qualifiedSource) WHERE \(mapping.sourceRow(identifiedBy: "?1"))")))
        let identities: [Value] = mapping.sourceHasRowid ? rows.rowids.map { .integer($0) } : rows.keys.map { .blob($0) }
        var present: [(index: Int, digest: UInt64)] = []
        var kept: [Int] = []  // the indexes of the rows not retired early
        for (index, identity) in identities.enumerated() {
            let row = try sqlite(lookup.fetchOne([identity]))
            if retired.identities.contains(identity) {
                if row != nil { throw Self.notTheRowsThatMoved(entry, mapping, present: present.count + 1) }
                continue
            }
            kept.append(index)
            if let row { present.append((index, UInt64(bitPattern: try sqlite(row.column(0))))) }
        }
        guard let first = present.first else { return nil }
        if present.count == kept.count {
            guard present.reduce(UInt64(0), { $0 &+ $1.digest }) == expected.digest else {
                throw Self.notTheRowsThatMoved(entry, mapping, present: present.count)
            }
            return 0
        }
        // Cleanup deletes in order: what is left of a batch cleaned in part is its last rows.
        guard present.map(\.index) == Array(kept.suffix(present.count)) else {
            throw Self.notTheRowsThatMoved(entry, mapping, present: present.count)
        }
        return first.index
    }

    /// Cleanup's refusal of a batch whose rows in the source are not the rows that moved.
    static func notTheRowsThatMoved(_ entry: (batch: Int64, rows: MovedRows), _ mapping: ResolvedMapping, present: Int) -> FerryError {
        .cleanupRefused(table: mapping.targetName, reason: "the source rows of batch \(entry.batch) are not the rows that moved "
            + "(\(present) of \(entry.rows.count) present, contents differ): the source file was replaced or edited since; "
            + "nothing more is deleted from it")
    }

    /// `[r1,r2,...]`: rowids as a JSON array, for `json_each`.
    static func jsonArray(_ rowids: ArraySlice<Int64>) -> String {
        var text = "["
        text.reserveCapacity(rowids.count * 8 + 2)
        for (index, rowid) in rowids.enumerated() {
            if index > 0 { text += "," }
            text += String(rowid)
        }
        return text + "]"
    }
}

/// Where the cleanup of a table that records its moves stands: the recorded batch it deletes
/// next, and how many of that batch's rows it deleted already.
struct RecordedCleanupPosition: Sendable, Equatable {
    var batch: Int64 = 0
    var offset = 0
}
