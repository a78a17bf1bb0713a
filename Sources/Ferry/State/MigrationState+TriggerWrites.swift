import FerrySQLite

/// The app's triggers that Ferry stores with calls of its procedure (`AppTriggerWrites`), each
/// with the text the app wrote: what is put back when no migrating table needs the calls any more,
/// and what the procedure reads the trigger's statements from. Recorded when the calls are added,
/// in the same transaction, so that Ferry never has to tell its calls from the app's text.
extension MigrationState {
    /// The app's triggers stored with Ferry's calls, and their text as the app wrote it.
    static let triggerWritesTable = "ferry_migration_trigger_writes"

    /// The catalog table of `triggerWritesTable` (part of `create`, and of `upgrade` for catalogs
    /// written before it existed).
    static let triggerWritesTableSQL = """
        CREATE TABLE IF NOT EXISTS main.\(triggerWritesTable)(
            schema TEXT NOT NULL,              -- 'main' or 'temp' (the writer's temp triggers)
            name TEXT NOT NULL COLLATE NOCASE,
            app_sql TEXT NOT NULL,             -- as the app wrote it (sqlite_master's text)
            stored_sql TEXT NOT NULL,          -- as stored, with Ferry's calls (sqlite_master's text)
            PRIMARY KEY (schema, name)
        );
        """

    /// Every recorded trigger, by `TriggerWritesRecord.key`; empty without a catalog.
    static func triggerWritesRecords(on db: Connection) throws(FerryError) -> [String: TriggerWritesRecord] {
        guard try sqlite(db.tableExists(triggerWritesTable)) else { return [:] }
        var records: [String: TriggerWritesRecord] = [:]
        for row in try sqlite(db.fetchAll("SELECT schema, name, app_sql, stored_sql FROM main.\(triggerWritesTable)")) {
            let record = TriggerWritesRecord(schema: try sqlite(row.column(0)), name: try sqlite(row.column(1)),
                                             appSQL: try sqlite(row.column(2)), storedSQL: try sqlite(row.column(3)))
            records[record.key] = record
        }
        return records
    }

    /// Trigger `name` of `schema` as `sqlite_master` stores it, with its record when Ferry stored it
    /// with calls; nil when there is no such trigger. One statement: the procedure asks at every
    /// row its trigger fires for.
    static func storedTrigger(schema: String, name: String, on db: Connection) throws(FerryError) -> (sql: String, record: TriggerWritesRecord?)? {
        guard let row = try sqlite(db.fetchOne("""
            SELECT m.sql, r.app_sql, r.stored_sql FROM \(schema).sqlite_master AS m
            LEFT JOIN main.\(triggerWritesTable) AS r ON r.schema = ?1 AND r.name = m.name
            WHERE m.type = 'trigger' AND m.name = ?2
            """, [.text(schema), .text(name)])) else { return nil }
        let sql: String = try sqlite(row.column(0))
        guard let appSQL: String = try sqlite(row.column(1, as: String?.self)), let storedSQL: String = try sqlite(row.column(2, as: String?.self))
        else { return (sql, nil) }
        return (sql, TriggerWritesRecord(schema: schema, name: name, appSQL: appSQL, storedSQL: storedSQL))
    }

    /// Records (or replaces the record of) a trigger stored with Ferry's calls.
    static func recordTriggerWrites(_ record: TriggerWritesRecord, on db: Connection) throws(FerryError) {
        try sqlite(db.execute("INSERT OR REPLACE INTO main.\(triggerWritesTable)(schema, name, app_sql, stored_sql) VALUES (?, ?, ?, ?)",
                              [.text(record.schema), .text(record.name), .text(record.appSQL), .text(record.storedSQL)]))
    }

    /// Forgets a trigger's record (stored as the app wrote it again, or gone).
    static func forgetTriggerWrites(schema: String, name: String, on db: Connection) throws(FerryError) {
        try sqlite(db.execute("DELETE FROM main.\(triggerWritesTable) WHERE schema = ? AND name = ?", [.text(schema), .text(name)]))
    }
}

/// A trigger of the app's stored with Ferry's calls (`AppTriggerWrites`).
struct TriggerWritesRecord: Sendable, Hashable {
    /// `main`, or `temp` for a temp trigger of the writer's.
    let schema: String
    let name: String
    /// The trigger as the app wrote it (`sqlite_master.sql`).
    let appSQL: String
    /// The trigger as stored with the calls (`sqlite_master.sql`).
    let storedSQL: String

    /// The key of `records`: schema and name, the name in any case.
    var key: String { Self.key(schema: schema, name: name) }
    static func key(schema: String, name: String) -> String { schema + "." + name.lowercased() }
}
