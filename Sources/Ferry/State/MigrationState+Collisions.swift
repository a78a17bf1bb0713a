import FerrySQLite

/// Source rows that collide with rows the target held before its migration was registered.
///
/// The target's row wins and the source row is quarantined. That is decided right after the
/// registration, before any statement reads the table: otherwise the union would show both rows
/// until the stepper reached the source row. Registration records that the check is due (when the
/// target has rows); the next load runs it and clears the mark, in one transaction, so a crash
/// in between only postpones it to the next open.
extension MigrationState {
    private static let collisionCheckKey = "collision_check:"

    /// Records that `target` (which holds rows) must be checked for colliding source rows.
    static func markCollisionCheckDue(target: String, on db: Connection) throws(FerryError) {
        try sqlite(db.execute("INSERT OR REPLACE INTO main.\(flagsTable)(key, value) VALUES (?, 1)", [.text(collisionCheckKey + target.lowercased())]))
    }

    /// The targets (lower-cased) whose collision check is due.
    static func collisionChecksDue(on db: Connection) throws(FerryError) -> Set<String> {
        guard try exists(on: db) else { return [] }
        return Set(try sqlite(db.fetchAll("SELECT substr(key, \(collisionCheckKey.count + 1)) FROM main.\(flagsTable) WHERE key LIKE '\(collisionCheckKey)%'"))
            .map { row throws(FerryError) in try sqlite(row.column(0, as: String.self)) })
    }

    /// The check of `record`'s target ran: the source rows with `identities` were quarantined. They
    /// join the moved set (the union and the stepper skip them) and count as quarantined; moved
    /// ahead starts that much lower, so that pruning them from the moved set later nets zero (the
    /// count before cleanup adds both). Updates `record` to match.
    static func recordCollisions(_ record: inout TableRecord, identities: [Value], on db: Connection) throws(FerryError) {
        for identity in identities {
            try sqlite(db.execute("INSERT OR IGNORE INTO main.\(movedTable)(target, source_rowid) VALUES (?, ?)", [.text(record.target), identity]))
        }
        record.rowsQuarantined += Int64(identities.count)
        record.rowsMovedAhead = record.rowsMovedAhead.map { $0 - Int64(identities.count) }
        try sqlite(db.execute("UPDATE main.\(tablesTable) SET rows_quarantined = ?2, rows_moved_ahead = ?3 WHERE target = ?1",
                              [.text(record.target), .integer(record.rowsQuarantined), record.rowsMovedAhead.map { .integer($0) } ?? .null]))
        try sqlite(db.execute("DELETE FROM main.\(flagsTable) WHERE key = ?", [.text(collisionCheckKey + record.target.lowercased())]))
    }
}
