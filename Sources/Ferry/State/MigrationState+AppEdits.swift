import FerrySQLite

/// The target rows the app changed or deleted after they moved, by rowid, per target: what
/// `verify` leaves out of its comparison with the source (an ordinary app edit is not a
/// difference), while the source rows are still there to compare. Ferry's triggers on the target
/// (`MigratingTableSQL.editTriggerSQL`) pass them to the writer's recorder function as the app's
/// statement runs; `AppEditLog` keeps those of committed transactions and writes them at the next
/// step. Forgotten when the source is cleaned (nothing is compared after) or the table is dropped.
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

    /// The function Ferry's triggers call with the rows the app edits (`Connection.defineEditRecorder`).
    static let editRecorderFunction = "ferry_record_edit"

    /// The statement of a trigger body that records the target rows whose rowids the expressions
    /// `rowids` give (`OLD.rowid`, ...): a `SELECT` of the recorder function, not an `INSERT`, which
    /// would reset the count SQL's `changes()` shows the rest of the app's statement. What it
    /// recorded is written by `recordEdits` later (`AppEditLog`).
    static func recordEditSQL(target: String, rowids: [String]) -> String {
        "SELECT \(editRecorderFunction)(\(sqlString(target)), \(rowids.joined(separator: ", ")))"
    }

    /// Writes the edits a statement's triggers recorded (by target, target rowids).
    static func recordEdits(_ edits: [String: Set<Int64>], on db: Connection) throws(FerryError) {
        for (target, rowids) in edits where !rowids.isEmpty {
            let list = "[" + rowids.sorted().map(String.init).joined(separator: ",") + "]"
            let statement = try sqlite(db.cachedStatement(recordEditsSQL))
            try sqlite(statement.bind([.text(target), .text(list)]))
            try sqlite(statement.execute())
        }
    }

    private static let recordEditsSQL = HashedSQL("INSERT OR IGNORE INTO main.\(editedRowsTable)(target, r) SELECT ?1, value FROM json_each(?2)")

    /// True (as SQL) when the target row whose rowid `rowid` gives was edited by the app.
    static func editedCondition(target: String, rowid: String) -> String {
        "(\(rowid)) IN (SELECT r FROM main.\(editedRowsTable) WHERE target = \(sqlString(target)))"
    }

    /// Forgets `target`'s recorded edits (as SQL, for statements run with others).
    static func forgetEditsSQL(target: String) -> String {
        "DELETE FROM main.\(editedRowsTable) WHERE target = \(sqlString(target))"
    }
}
