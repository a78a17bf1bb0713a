import Foundation

/// Moves rows from sources to targets in small, set-based, crash-safe batches.
///
/// One batch = one write transaction on one mapping:
/// ```sql
/// SELECT max(r) FROM (SELECT rowid AS r FROM src.S WHERE rowid > :cursor AND <filter> ORDER BY rowid LIMIT :n)  -- hi
/// INSERT INTO main.T(rowid, cols) SELECT rowid, cols FROM src.S WHERE rowid > :cursor AND rowid <= :hi AND <filter>
/// DELETE FROM src.S WHERE rowid > :cursor AND rowid <= :hi AND <filter>
/// UPDATE main.ferry_migration_tables SET cursor = :hi, batch_low = :cursor, ... WHERE target = 'T'
/// ```
/// The keyset cursor only moves forward, so rows outside the filter are scanned once in total,
/// never again (a filtered migration stays linear).
///
/// Crash safety: in WAL mode a transaction over two files commits file by file, target (`main`)
/// first. A crash between the two commits leaves the batch's rows in the target *and* the source;
/// the target's catalog row then says which rowids moved (`batch_low`, `cursor`], so `reconcile`
/// deletes exactly those leftovers from the source on the next open. Reads never show them twice
/// in between: the union read only takes source rows above the cursor.
final class Stepper: @unchecked Sendable {
    // Only used on the writer's serial queue.
    private let engine: MigrationEngine
    /// Rows per batch, adapted to the time budget.
    private var batchRows: [String: Int] = [:]
    private var rotation = 0

    init(engine: MigrationEngine) { self.engine = engine }

    /// Moves one batch of one migrating table. Returns nil when nothing is migrating.
    func step(on db: Connection, budget: Double) throws(FerryError) -> StepReport? {
        guard !db.isInTransaction else {
            throw .misuse("a migration step runs its own transaction; call it outside of a transaction")
        }
        let migrating = engine.migratingMappings
        guard !migrating.isEmpty else { return nil }
        // Cross-file sources first (their rows cost two files), then round-robin.
        rotation += 1
        let ordered = migrating.filter { $0.source.path != nil } + migrating.filter { $0.source.path == nil }
        let mapping = ordered[rotation % ordered.count]
        return try moveBatch(mapping, on: db, budget: budget)
    }

    private func moveBatch(_ mapping: ResolvedMapping, on db: Connection, budget: Double) throws(FerryError) -> StepReport {
        let key = mapping.targetName.lowercased()
        let limit = batchRows[key] ?? 256
        let lastRowid = db.lastInsertRowid
        defer { db.setLastInsertRowid(lastRowid) }  // a step is invisible to the app's last_insert_rowid
        let start = ContinuousClock.now
        var record = mapping.record
        var moved = 0
        var quarantined = 0
        var finished = false

        try db.inTransaction(.immediate) { () throws(FerryError) in
            let cursor = record.cursor ?? Int64.min
            let hi: Int64? = try db.scalar("""
                SELECT max(r) FROM (SELECT \(mapping.sourceRowid) AS r FROM \(mapping.qualifiedSource)
                WHERE \(mapping.sourceRowid) > ?1 AND \(mapping.filterCondition) ORDER BY \(mapping.sourceRowid) LIMIT ?2)
                """, [.integer(cursor), .integer(Int64(limit))])
            if let hi {
                (moved, quarantined) = try copyRange(mapping, low: cursor, high: hi, on: db)
                try db.execute("DELETE FROM \(mapping.qualifiedSource) WHERE \(mapping.rangeCondition)", [.integer(cursor), .integer(hi)])
                record.cursor = hi
                record.batchLow = cursor
                record.rowsMoved += Int64(moved)
                record.rowsQuarantined += Int64(quarantined)
                try db.execute("""
                    UPDATE main.\(MigrationCatalog.tablesTable)
                    SET cursor = ?1, batch_low = ?2, rows_moved = ?3, rows_quarantined = ?4 WHERE target = ?5
                    """, [.integer(hi), .integer(cursor), .integer(record.rowsMoved), .integer(record.rowsQuarantined), .text(record.target)])
            } else {
                // Nothing above the cursor. Completion is decided by an explicit check that no
                // matching row is left anywhere in the source, never by an empty or ignored insert.
                let remaining: Int64? = try db.scalar(
                    "SELECT \(mapping.sourceRowid) FROM \(mapping.qualifiedSource) WHERE \(mapping.filterCondition) LIMIT 1")
                if remaining != nil {
                    // Rows below the cursor (e.g. restored by hand): scan again from the start.
                    record.cursor = nil
                    try db.execute("UPDATE main.\(MigrationCatalog.tablesTable) SET cursor = NULL, batch_low = NULL WHERE target = ?",
                                   [.text(record.target)])
                } else {
                    try finish(&record, mapping: mapping, on: db)
                    finished = true
                }
            }
        }
        let elapsed = (ContinuousClock.now - start).seconds
        adapt(key: key, limit: limit, moved: moved, elapsed: elapsed, budget: budget)
        engine.updateRecord(record)
        let left = max(0, (record.rowsEstimate ?? 0) - record.rowsMoved - record.rowsQuarantined)
        return StepReport(table: mapping.targetName, rowsMoved: moved, rowsQuarantined: quarantined,
                          rowsLeft: finished ? 0 : left, elapsed: elapsed, tableFinished: finished,
                          allFinished: engine.migratingMappings.isEmpty)
    }

    /// Copies the mapping's source rows with rowid in (low, high] into the target. Set-based; on a
    /// constraint conflict it falls back to row by row and sets conflicting rows aside.
    private func copyRange(_ mapping: ResolvedMapping, low: Int64, high: Int64, on db: Connection) throws(FerryError) -> (moved: Int, quarantined: Int) {
        let insert = mapping.insertSelectHead() + " WHERE \(mapping.rangeCondition)"
        do {
            return try db.inSavepoint { () throws(FerryError) in
                try db.execute(insert, [.integer(low), .integer(high)])
                return (db.changes, 0)
            }
        } catch where error.resultCode?.primary == .constraint {
            return try copyRowByRow(mapping, low: low, high: high, on: db)
        }
    }

    private func copyRowByRow(_ mapping: ResolvedMapping, low: Int64, high: Int64, on db: Connection) throws(FerryError) -> (moved: Int, quarantined: Int) {
        let rowids: [Int64] = try db.fetchAll(
            "SELECT \(mapping.sourceRowid) FROM \(mapping.qualifiedSource) WHERE \(mapping.rangeCondition) ORDER BY 1",
            [.integer(low), .integer(high)]).map { row throws(FerryError) in try row.get(0) }
        let insertOne = mapping.insertSelectHead() + " WHERE \(mapping.sourceRowid) = ?1"
        var moved = 0
        var quarantined = 0
        for rowid in rowids {
            do {
                try db.inSavepoint { () throws(FerryError) in try db.execute(insertOne, [.integer(rowid)]) }
                moved += 1
            } catch where error.resultCode?.primary == .constraint {
                try Quarantine.record(mapping, sourceRowid: rowid, reason: "\(error)", on: db)
                quarantined += 1
            }
        }
        return (moved, quarantined)
    }

    /// Marks a table finished and drops its source table when nothing is left in it.
    private func finish(_ record: inout TableRecord, mapping: ResolvedMapping, on db: Connection) throws(FerryError) {
        record.state = .finished
        let othersUseSource = engine.migratingMappings.contains {
            $0.targetName.lowercased() != mapping.targetName.lowercased()
                && $0.source.id == mapping.source.id && $0.sourceShape.name.lowercased() == mapping.sourceShape.name.lowercased()
        }
        let empty = try db.scalar("SELECT count(*) FROM (SELECT 1 FROM \(mapping.qualifiedSource) LIMIT 1)", as: Int.self) == 0
        if empty && !othersUseSource && !engine.keepsSourceTables {
            try db.execute("DROP TABLE \(mapping.qualifiedSource)")
            record.sourceDropped = true
        }
        try db.execute("""
            UPDATE main.\(MigrationCatalog.tablesTable) SET state = 'finished', finished_at = ?1, source_dropped = ?2 WHERE target = ?3
            """, [.real(Date().timeIntervalSince1970), .integer(record.sourceDropped ? 1 : 0), .text(record.target)])
    }

    /// Adapts the batch size so a batch takes about 70% of the budget.
    private func adapt(key: String, limit: Int, moved: Int, elapsed: Double, budget: Double) {
        guard moved > 0, elapsed > 0 else { return }
        let perRow = elapsed / Double(moved)
        let ideal = Int(budget * 0.7 / perRow)
        let next = min(max(ideal, 16), limit * 2, 100_000)
        batchRows[key] = elapsed > budget ? max(16, min(next, limit / 2)) : next
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }
}
