import FerrySQLite

/// The app's INSERT triggers on migrating targets, and the guard that keeps them quiet while Ferry
/// moves rows.
///
/// On a finished table the app's triggers fire for the app's own writes only; Ferry's moves
/// (stepper batches, the moves ahead of an app write, the redirect triggers' moves) are not writes
/// of the app. A move is an `INSERT` into the target, so the target's INSERT triggers would fire
/// for it. While a table migrates, each of its INSERT triggers is stored with a guarded `WHEN`
/// (`appTriggerCondition AND (the app's condition)`), and every move raises the guard, a row in
/// `main.ferry_migration_guard`, for its own duration, inside its own transaction or statement: the
/// guard never commits. The trigger's original text is kept here and put back, in the same
/// transaction, when the table finishes.
///
/// The guard lives in `main` because a trigger stored in `main` can read `main` alone; it stays
/// empty in every committed state, so a connection that is not Ferry's (a raw SQLite connection)
/// sees the app's triggers fire as written.
extension MigrationState {
    /// The guard table: holds a row while Ferry moves rows into a target.
    static let moveGuardTable = "ferry_migration_guard"
    /// The app's guarded triggers and their original text.
    static let appTriggersTable = "ferry_migration_triggers"

    /// The catalog tables of app triggers (part of `create`).
    static let appTriggerTablesSQL = """
        CREATE TABLE IF NOT EXISTS main.\(moveGuardTable)(x);
        CREATE TABLE IF NOT EXISTS main.\(appTriggersTable)(
            schema TEXT NOT NULL,              -- 'main' or 'temp' (the writer's temp triggers)
            name TEXT NOT NULL COLLATE NOCASE,
            target TEXT NOT NULL COLLATE NOCASE,
            original_sql TEXT NOT NULL,        -- as the app wrote it (sqlite_master's text)
            guarded_sql TEXT NOT NULL,         -- as stored while the target migrates
            PRIMARY KEY (schema, name)
        );
        """

    /// The condition that makes a trigger of the app skip Ferry's moves (unqualified: the trigger
    /// lives in main, or in temp, which searches main next).
    static let appTriggerCondition = "NOT EXISTS (SELECT 1 FROM \(moveGuardTable))"

    /// Raises the guard (a statement of Ferry's own transaction: the stepper's batch).
    static let raiseMoveGuardSQL = "INSERT INTO main.\(moveGuardTable)(x) VALUES (1)"

    /// Raises the guard when the one-column table `rowsTable` lists rows to move (nothing is
    /// written otherwise), and, given `target`, only when the app has guarded triggers on it.
    /// Unqualified inside trigger bodies.
    static func raiseMoveGuardSQL(whenRowsIn rowsTable: String, qualified: Bool, onlyForAppTriggersOf target: String? = nil) -> String {
        let main = qualified ? "main." : ""
        let triggers = target.map { " AND EXISTS (SELECT 1 FROM \(main)\(appTriggersTable) WHERE target = \(sqlString($0)))" } ?? ""
        return "INSERT INTO \(main)\(moveGuardTable)(x) SELECT 1 WHERE EXISTS (SELECT 1 FROM \(rowsTable))\(triggers)"
    }

    /// Lowers the guard. It has a `WHERE`, so that SQLite scans the (usually empty) table instead
    /// of clearing its page, which would write it.
    static func lowerMoveGuardSQL(qualified: Bool) -> String {
        "DELETE FROM \(qualified ? "main." : "")\(moveGuardTable) WHERE x IS NOT NULL"
    }

    /// The guarded triggers of `target` (any case).
    static func guardedAppTriggers(target: String, on db: Connection) throws(FerryError) -> [GuardedAppTrigger] {
        guard try exists(on: db) else { return [] }
        return try sqlite(db.fetchAll("SELECT schema, name, original_sql, guarded_sql FROM main.\(appTriggersTable) WHERE target = ?",
                                      [.text(target)])).map { row throws(FerryError) in
            GuardedAppTrigger(schema: try sqlite(row.column(0)), name: try sqlite(row.column(1)), target: target,
                              originalSQL: try sqlite(row.column(2)), guardedSQL: try sqlite(row.column(3)))
        }
    }

    /// Records a trigger Ferry guarded (replacing an older record of the same name).
    static func recordGuardedAppTrigger(_ trigger: GuardedAppTrigger, on db: Connection) throws(FerryError) {
        try sqlite(db.execute("INSERT OR REPLACE INTO main.\(appTriggersTable)(schema, name, target, original_sql, guarded_sql) VALUES (?, ?, ?, ?, ?)",
                              [.text(trigger.schema), .text(trigger.name), .text(trigger.target), .text(trigger.originalSQL), .text(trigger.guardedSQL)]))
    }

    /// Forgets a guarded trigger (it was restored, dropped or replaced).
    static func forgetGuardedAppTrigger(_ trigger: GuardedAppTrigger, on db: Connection) throws(FerryError) {
        try sqlite(db.execute("DELETE FROM main.\(appTriggersTable) WHERE schema = ? AND name = ?", [.text(trigger.schema), .text(trigger.name)]))
    }

    /// Forgets every guarded trigger of `target` (SQL: `DROP TABLE` of the target dropped them).
    static func forgetGuardedAppTriggersSQL(target: String) -> String {
        "DELETE FROM main.\(appTriggersTable) WHERE target = \(sqlString(target))"
    }
}

/// An INSERT trigger of the app's on a migrating target, stored guarded while the target migrates.
struct GuardedAppTrigger: Sendable, Hashable {
    /// `main`, or `temp` for a temp trigger of the writer's.
    let schema: String
    let name: String
    let target: String
    /// The trigger as the app wrote it (`sqlite_master.sql`).
    let originalSQL: String
    /// The trigger as stored while the target migrates (`sqlite_master.sql`).
    let guardedSQL: String
}
