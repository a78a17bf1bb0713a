import FerrySQLite

/// What each batch moved, recorded when it happened (`MovedRows`): cleanup deletes exactly these
/// source rows, whatever the filter says by then.
extension MigrationState {
    /// Removes the moved-set rows of `target` that `condition` (on `source_rowid`) selects, in the
    /// caller's transaction. Returns how many, and their rowids when `returningRows` (a source
    /// without rowid keeps row keys there: no rowids are returned for it).
    static func pruneMovedSet(of target: String, where condition: String, returningRows: Bool,
                              on db: Connection) throws(FerryError) -> (count: Int, rowids: [Int64]) {
        let delete = "DELETE FROM main.\(movedTable) WHERE target = ?1 AND \(condition)"
        guard returningRows else {
            try sqlite(db.execute(delete, [.text(target)]))
            return (db.changes, [])
        }
        let rows = try sqlite(db.fetchAll(delete + " RETURNING source_rowid", [.text(target)]))
        var rowids: [Int64] = []
        rowids.reserveCapacity(rows.count)
        for row in rows { if case .integer(let rowid) = row[0] { rowids.append(rowid) } }
        return (rows.count, rowids)
    }

    /// Records the source rows a batch of `target` accounted for (a new entry after the others), in
    /// the batch's transaction. Nothing when `rows` is empty.
    static func recordMovedRows(_ rows: MovedRows, target: String, on db: Connection) throws(FerryError) {
        guard !rows.rowids.isEmpty else { return }
        try sqlite(db.execute("""
            INSERT INTO main.\(movedRowsTable)(target, batch, row_count, rowids)
            VALUES (?1, ifnull((SELECT max(batch) FROM main.\(movedRowsTable) WHERE target = ?1), 0) + 1, ?2, ?3)
            """, [.text(target), .integer(Int64(rows.rowids.count)), .blob(rows.encoded)]))
    }

    /// The first recorded batch of `target` numbered `batch` or later, if any.
    static func movedRows(of target: String, from batch: Int64, on db: Connection) throws(FerryError) -> (batch: Int64, rows: MovedRows)? {
        guard let row = try sqlite(db.fetchOne("""
            SELECT batch, rowids FROM main.\(movedRowsTable) WHERE target = ?1 AND batch >= ?2 ORDER BY batch LIMIT 1
            """, [.text(target), .integer(batch)])) else { return nil }
        let found: Int64 = try sqlite(row.get(0))
        guard case .blob(let bytes) = row[1], let rows = MovedRows(decoding: bytes) else {
            throw .cleanupRefused(table: target, reason: "the record of the rows batch \(found) moved cannot be read")
        }
        return (found, rows)
    }

    /// The rows the recorded batches of `target` accounted for, in all.
    static func movedRowCount(of target: String, on db: Connection) throws(FerryError) -> Int64 {
        try sqlite(db.scalar("SELECT ifnull(sum(row_count), 0) FROM main.\(movedRowsTable) WHERE target = ?1", [.text(target)], as: Int64.self)) ?? 0
    }
}
