import FerrySQLite

/// The target rows the app changed or deleted after they moved, by rowid, per target: what
/// `verify` leaves out of its comparison with the source (an ordinary app edit is not a
/// difference), while the source rows are still there to compare. Written by Ferry's triggers on
/// the target (`MigratingTableSQL.editTriggerSQL`) in the app's own statement, forgotten when the
/// source is cleaned (nothing is compared after) or the table is dropped.
extension MigrationState {
    /// The recorded edits: (target, target rowid).
    static let editedRowsTable = "ferry_migration_edited"

    /// Creates the table (for catalogs of earlier versions too: run by `upgrade`).
    static let editedRowsTableSQL = """
        CREATE TABLE IF NOT EXISTS main.\(editedRowsTable)(
            target TEXT NOT NULL,              -- target rows the app updated, deleted or replaced
            r INTEGER NOT NULL,                -- after they moved (by rowid): verify compares them no more
            PRIMARY KEY (target, r)
        ) WITHOUT ROWID
        """

    /// The statement of a trigger body (unqualified: trigger bodies may not name a schema) that
    /// records the target rows whose rowids the expressions `rowids` give (`OLD.rowid`, ...). Not
    /// `INSERT OR IGNORE`: the conflict clause of the app's statement (`UPDATE OR ROLLBACK`, say)
    /// would override it; a row already recorded is skipped by the query.
    static func recordEditSQL(target: String, rowids: [String]) -> String {
        "INSERT INTO \(editedRowsTable)(target, r) SELECT \(sqlString(target)), r FROM ("
            + rowids.map { "SELECT \($0) AS r" }.joined(separator: " UNION ")
            + ") WHERE r NOT IN (SELECT r FROM \(editedRowsTable) WHERE target = \(sqlString(target)))"
    }

    /// True (as SQL) when the target row whose rowid `rowid` gives was edited by the app.
    static func editedCondition(target: String, rowid: String) -> String {
        "(\(rowid)) IN (SELECT r FROM main.\(editedRowsTable) WHERE target = \(sqlString(target)))"
    }

    /// Forgets `target`'s recorded edits (as SQL, for statements run with others).
    static func forgetEditsSQL(target: String) -> String {
        "DELETE FROM main.\(editedRowsTable) WHERE target = \(sqlString(target))"
    }
}
