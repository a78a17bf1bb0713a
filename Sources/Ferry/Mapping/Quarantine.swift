import FerrySQLite

/// Source rows that could not be moved because they conflict with a row already in the target.
///
/// Policy: the target's row wins; the source row is copied, whole, into
/// `main."ferry_quarantine_<target>"` (the source's columns plus the source rowid or row key, the reason and
/// the time, by SQLite's clock in UTC ISO-8601 text, as every time Ferry persists:
/// `MigrationState.nowSQL`) and reported, never dropped silently or left invisible.
enum Quarantine {
    /// The quarantine table of a target.
    static func tableName(for target: String) -> String { "ferry_quarantine_\(target)" }

    /// Copies one source row into the quarantine table, creating it on first use.
    /// `identity` is the row's rowid, or its row key when the source has no rowid (kept in
    /// `ferry_source_rowid` then).
    static func record(_ mapping: ResolvedMapping, identity: Value, reason: String, on db: Connection) throws(FerryError) {
        let table = "main.\(q(tableName(for: mapping.targetName)))"
        let columns = mapping.sourceShape.columns.filter { !$0.isGenerated }.map(\.name)
        let columnList = columns.map(q).joined(separator: ", ")
        try sqlite(db.execute("""
            CREATE TABLE IF NOT EXISTS \(table)(ferry_source_rowid INTEGER, ferry_reason TEXT, ferry_quarantined_at TEXT\(columns.isEmpty ? "" : ", ")\(columnList))
            """))
        try sqlite(db.execute("""
            INSERT INTO \(table)(ferry_source_rowid, ferry_reason, ferry_quarantined_at\(columns.isEmpty ? "" : ", ")\(columnList))
            SELECT \(mapping.sourceIdentity), ?2, \(MigrationState.nowSQL)\(columns.isEmpty ? "" : ", ")\(columns.map { "\(mapping.qualifiedSource).\(q($0))" }.joined(separator: ", "))
            FROM \(mapping.qualifiedSource) WHERE \(mapping.sourceRow(identifiedBy: "?1"))
            """, [identity, .text(reason)]))
    }
}
