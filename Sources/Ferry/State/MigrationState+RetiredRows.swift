import FerrySQLite

/// The moved rows a same-file source gave up before cleanup (`MigratingTableSQL
/// .sourceForeignKeyTriggerSQL`, a filtered source whose moves are recorded): recorded by the
/// trigger that deletes them, in the app's transaction, with their digest, by source. Cleanup and
/// `verify` read a batch's record less these rows: gone from the source, yet accounted for.
extension MigrationState {
    /// The retired rows: (source id, source table, row identity) and the row's digest.
    static let retiredRowsTable = "ferry_migration_retired_rows"

    /// Creates the table (for catalogs of earlier versions too: run by `upgrade`).
    static let retiredRowsTableSQL = """
        CREATE TABLE IF NOT EXISTS main.\(retiredRowsTable)(
            source_id INTEGER NOT NULL,        -- moved rows deleted from a same-file source before cleanup
            source_table TEXT NOT NULL,        -- (its own foreign key): by rowid, or row key without rowid,
            r NOT NULL,                        -- with their digest (RowDigest) when they went
            digest INTEGER NOT NULL,
            PRIMARY KEY (source_id, source_table, r)
        ) WITHOUT ROWID
        """

    /// The rows of a recorded batch (`rows`) of the table `record` that were retired early, with
    /// the digests they had when they went.
    static func retiredRows(of rows: MovedRows, _ record: TableRecord, on db: Connection) throws(FerryError) -> RetiredRows {
        guard rows.count > 0, try sqlite(db.tableExists(retiredRowsTable)) else { return RetiredRows() }
        let (low, high): (Value, Value) = rows.keys.isEmpty
            ? (.integer(rows.rowids.first!), .integer(rows.rowids.last!)) : (.blob(rows.keys.first!), .blob(rows.keys.last!))
        let found = try sqlite(db.fetchAll("""
            SELECT r, digest FROM main.\(retiredRowsTable) WHERE source_id = ?1 AND source_table = ?2 AND r BETWEEN ?3 AND ?4
            """, [.integer(record.sourceID), .text(record.sourceTable), low, high]))
        guard !found.isEmpty else { return RetiredRows() }
        let members: Set<Value> = rows.keys.isEmpty ? Set(rows.rowids.map { .integer($0) }) : Set(rows.keys.map { .blob($0) })
        var retired = RetiredRows()
        for row in found where members.contains(row[0]) {
            retired.identities.insert(row[0])
            retired.digest &+= UInt64(bitPattern: try sqlite(row.column(1, as: Int64.self)))
        }
        return retired
    }
}

extension MigrationState {
    /// Forgets the retired rows of `record`'s source, once cleaned (a later migration of the same
    /// source table starts with none).
    static func forgetRetiredRows(of record: TableRecord, on db: Connection) throws(FerryError) {
        guard try sqlite(db.tableExists(retiredRowsTable)) else { return }
        try sqlite(db.execute("DELETE FROM main.\(retiredRowsTable) WHERE source_id = ?1 AND source_table = ?2",
                              [.integer(record.sourceID), .text(record.sourceTable)]))
    }
}

/// The rows of a recorded batch that left the source early (`MigrationState.retiredRows`).
struct RetiredRows {
    /// Their identities (`.integer` rowids, or `.blob` row keys).
    var identities: Set<Value> = []
    /// The sum (wrapping) of their digests.
    var digest: UInt64 = 0
    var count: Int { identities.count }
}
