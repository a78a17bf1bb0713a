import FerrySQLite

/// What each batch moved, recorded when it happened (`MovedRows`): cleanup deletes exactly these
/// source rows, whatever the filter says by then.
extension MigrationState {
    /// Records the source rows a batch of `target` accounted for (a new entry after the others), in
    /// the batch's transaction. Nothing when `rows` is empty.
    static func recordMovedRows(_ rows: MovedRows, target: String, on db: Connection) throws(FerryError) {
        guard rows.count > 0 else { return }
        try sqlite(db.execute("""
            INSERT INTO main.\(movedRowsTable)(target, batch, row_count, rowids, digest)
            VALUES (?1, ifnull((SELECT max(batch) FROM main.\(movedRowsTable) WHERE target = ?1), 0) + 1, ?2, ?3, ?4)
            """, [.text(target), .integer(Int64(rows.count)), .blob(rows.encoded), .integer(Int64(bitPattern: rows.digest))]))
    }

    /// The first recorded batch of `target` numbered `batch` or later, if any.
    static func movedRows(of target: String, from batch: Int64, on db: Connection) throws(FerryError) -> (batch: Int64, rows: MovedRows)? {
        guard let row = try sqlite(db.fetchOne("""
            SELECT batch, rowids, digest FROM main.\(movedRowsTable) WHERE target = ?1 AND batch >= ?2 ORDER BY batch LIMIT 1
            """, [.text(target), .integer(batch)])) else { return nil }
        let found: Int64 = try sqlite(row.column(0))
        guard case .blob(let bytes) = row[1], case .integer(let digest) = row[2],
              let rows = MovedRows(decoding: bytes, digest: UInt64(bitPattern: digest)) else {
            throw .cleanupRefused(table: target, reason: "the record of the rows batch \(found) moved cannot be read")
        }
        return (found, rows)
    }

    /// The rows the recorded batches of `target` accounted for, in all.
    static func movedRowCount(of target: String, on db: Connection) throws(FerryError) -> Int64 {
        try sqlite(db.scalar("SELECT ifnull(sum(row_count), 0) FROM main.\(movedRowsTable) WHERE target = ?1", [.text(target)], as: Int64.self)) ?? 0
    }
}
