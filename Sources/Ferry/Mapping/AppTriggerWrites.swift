import FerrySQL
import FerrySQLite

/// Keeps the app's triggers that update or delete rows of a migrating table working on its
/// pending rows: each such statement of their body is preceded by a call of Ferry's procedure,
/// which moves the pending rows the statement may touch into the target first
/// (`TriggerWriteMoves`; the procedure is `AppAccess.defineTriggerMoves`).
///
/// The calls follow the set of migrating tables, read from Ferry's catalog: added for a table when
/// it starts migrating, removed when it finishes, so that the app's text comes back byte for byte.
/// Runs on the writer, in a transaction (the app's, the registration's, the stepper's, or one of its
/// own), so a trigger is never lost between its drop and its re-creation.
enum AppTriggerWrites {
    /// Adds or removes the calls in every trigger of the app (in `main`, and the writer's own in
    /// `temp`) so that they match the tables migrating now.
    /// - Throws: `FerryError.unsupportedDuringMigration` for a trigger that names a migrating table
    ///   and that Ferry cannot read.
    static func sync(on db: Connection) throws(FerryError) {
        let migrating = try MigrationState.unfinishedTargets(on: db)
        for schema in ["main", "temp"] {
            let rows = try sqlite(db.fetchAll("SELECT name, sql FROM \(schema).sqlite_master WHERE type = 'trigger' "
                                              + "AND name NOT LIKE 'ferry\\_%' ESCAPE '\\'"))
            for row in rows {
                let name: String = try sqlite(row.column(0))
                let stored: String = try sqlite(row.column(1))
                let lowered = stored.lowercased()
                let namesMigrating = migrating.contains { lowered.contains($0) }
                guard namesMigrating || lowered.contains(TriggerWriteMoves.procedure) else { continue }
                let app = TriggerWriteMoves.withoutCalls(stored)
                var wanted = app
                if namesMigrating {
                    do throws(SQLSyntaxError) {
                        wanted = try TriggerWriteMoves.withCalls(app, schema: schema, name: name) { table, tableSchema in
                            (tableSchema == nil || tableSchema == "main") && migrating.contains(table)
                        } ?? app
                    } catch {
                        throw .unsupportedDuringMigration(table: migrating.sorted().first { lowered.contains($0) } ?? "", statement: stored,
                                                          reason: "Ferry cannot read trigger \(name) to make its body reach the rows not moved yet")
                    }
                }
                guard wanted != stored else { continue }
                try replace(trigger: name, in: schema, with: wanted, on: db)
            }
        }
    }

    /// Drops the trigger and creates it again from `sql` (sqlite_master's text), in one transaction.
    private static func replace(trigger name: String, in schema: String, with sql: String, on db: Connection) throws(FerryError) {
        try AppTriggerGuard.inTransaction(db) { () throws(FerryError) in
            try sqlite(db.execute("DROP TRIGGER \(q(schema)).\(q(name))"))
            try sqlite(db.execute(AppTriggerGuard.creation(of: sql, schema: schema)))
        }
    }
}
