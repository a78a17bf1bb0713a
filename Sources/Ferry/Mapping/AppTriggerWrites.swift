import FerrySQL
import FerrySQLite

/// Keeps the app's triggers that read, update or delete rows of a migrating table working on its
/// pending rows: Ferry's calls go before or in place of such statements of their body, and in
/// place of such a `WHEN` (`TriggerWriteMoves` writes them; the functions are in
/// `AppAccess+TriggerCalls`).
///
/// The calls follow the set of migrating tables, read from Ferry's catalog: added for a table when
/// it starts migrating, removed when it finishes. When Ferry adds calls it records the app's text
/// beside the stored one (`MigrationState.triggerWritesTable`), and puts that text back, byte for
/// byte: what Ferry added is known from the record, never told apart from the app's text.
/// Runs on the writer, in a transaction (the app's, the registration's, the stepper's, or one of its
/// own), so a trigger is never lost between its drop and its re-creation.
enum AppTriggerWrites {
    /// Adds or removes the calls in every trigger of the app (in `main`, and the writer's own in
    /// `temp`) so that they match the tables migrating now, and keeps the records in step.
    /// - Throws: `FerryError.unsupportedDuringMigration` for a trigger that names a migrating table
    ///   and that Ferry cannot read.
    static func sync(on db: Connection) throws(FerryError) {
        let migrating = try MigrationState.unfinishedTargets(on: db)
        var records = try MigrationState.triggerWritesRecords(on: db)
        guard !migrating.isEmpty || !records.isEmpty else { return }
        // What a body statement may read to need the pending rows: a migrating table, or a view over one.
        let views = Set(try DependentView.load(on: db, reading: Set(migrating)).views.map { $0.name.lowercased() })
        let relations = migrating.union(views)
        for schema in ["main", "temp"] {
            var texts: [String: String] = [:]  // lower-cased name → the text wanted, for those that change
            var writes: [(name: String, app: String, wanted: String)] = []  // the records to keep in step
            for trigger in try appTriggers(in: schema, on: db) {
                let name = trigger.name, stored = trigger.sql
                let record = records.removeValue(forKey: TriggerWritesRecord.key(schema: schema, name: name))
                let app = appText(stored: stored, record: record)
                let lowered = app.lowercased()
                var wanted = app
                if relations.contains(where: { lowered.contains($0) }) {
                    do throws(SQLSyntaxError) {
                        wanted = try TriggerWriteMoves.withCalls(app, schema: schema, name: name, isMigrating: { table, tableSchema in
                            (tableSchema == nil || tableSchema == "main") && migrating.contains(table)
                        }, isRead: { relation, relationSchema in
                            (relationSchema == nil || relationSchema == "main") && relations.contains(relation)
                        }) ?? app
                    } catch {
                        throw .unsupportedDuringMigration(table: migrating.sorted().first { lowered.contains($0) } ?? "", statement: app,
                                                          reason: "Ferry cannot read trigger \(name) to make its body reach the rows not moved yet")
                    }
                }
                let recorded = wanted == app ? record == nil : record == TriggerWritesRecord(schema: schema, name: name, appSQL: app, storedSQL: stored)
                guard wanted != stored || !recorded else { continue }
                if wanted != stored { texts[name.lowercased()] = wanted }
                writes.append((name, app, wanted))
            }
            guard !writes.isEmpty else { continue }
            try AppTriggerGuard.inTransaction(db) { () throws(FerryError) in
                try recreate(texts, in: schema, on: db)
                for write in writes {
                    if write.wanted == write.app {
                        try MigrationState.forgetTriggerWrites(schema: schema, name: write.name, on: db)
                    } else {
                        let now: String? = try sqlite(db.scalar("SELECT sql FROM \(schema).sqlite_master WHERE type = 'trigger' AND name = ?",
                                                                [.text(write.name)]))
                        try MigrationState.recordTriggerWrites(TriggerWritesRecord(schema: schema, name: write.name, appSQL: write.app,
                                                                                   storedSQL: now ?? write.wanted), on: db)
                    }
                }
            }
        }
        // Records of triggers that are gone (dropped by the app, or a temp trigger of an earlier writer).
        guard !records.isEmpty else { return }
        try AppTriggerGuard.inTransaction(db) { () throws(FerryError) in
            for record in records.values { try MigrationState.forgetTriggerWrites(schema: record.schema, name: record.name, on: db) }
        }
    }

    /// The app's text of a trigger stored as `stored`: the recorded text when Ferry stored it so;
    /// without the calls that name this trigger when SQLite rewrote it since (a table or column
    /// renamed: the record's text is older than the app's); `stored` itself without a record.
    static func appText(stored: String, record: TriggerWritesRecord?) -> String {
        guard let record else { return stored }
        if record.storedSQL == stored { return record.appSQL }
        // A statement replaced by a call is in the record only: its text, older than SQLite's.
        return TriggerWriteMoves.withoutCalls(stored, schema: record.schema, name: record.name) ?? record.appSQL
    }

    /// Puts the app's text back in every trigger Ferry added calls to, and forgets the records:
    /// before a statement that makes SQLite rewrite the triggers' text (`ALTER TABLE`: a table or
    /// column renamed, a column dropped), so that SQLite reads and rewrites the app's statements,
    /// not Ferry's calls (or refuses as it would on the finished database). `sync` adds the calls
    /// again after it.
    static func restoreAppTexts(on db: Connection) throws(FerryError) {
        let records = try MigrationState.triggerWritesRecords(on: db)
        guard !records.isEmpty else { return }
        try AppTriggerGuard.inTransaction(db) { () throws(FerryError) in
            for schema in ["main", "temp"] {
                var texts: [String: String] = [:]
                for trigger in try appTriggers(in: schema, on: db) {
                    guard let record = records[TriggerWritesRecord.key(schema: schema, name: trigger.name)] else { continue }
                    let app = appText(stored: trigger.sql, record: record)
                    if app != trigger.sql { texts[trigger.name.lowercased()] = app }
                }
                try recreate(texts, in: schema, on: db)
            }
            for record in records.values { try MigrationState.forgetTriggerWrites(schema: record.schema, name: record.name, on: db) }
        }
    }

    /// The app's triggers in `schema` (not Ferry's), in the order SQLite stores them: name, table
    /// and text.
    private static func appTriggers(in schema: String, on db: Connection) throws(FerryError) -> [(name: String, table: String, sql: String)] {
        try sqlite(db.fetchAll("SELECT name, tbl_name, sql FROM \(schema).sqlite_master WHERE type = 'trigger' "
                               + "AND name NOT LIKE 'ferry\\_%' ESCAPE '\\' ORDER BY rowid")).map { row throws(FerryError) in
            (try sqlite(row.column(0)), try sqlite(row.column(1)), try sqlite(row.column(2)))
        }
    }

    /// Stores the triggers of `schema` named in `texts` (lower-cased) with their new text. SQLite
    /// fires a table's triggers in the order they were created, newest first: every app trigger
    /// of a table one of them is on is created again, in the order they stood, so that they keep
    /// firing in the order the app's finished database fires them.
    private static func recreate(_ texts: [String: String], in schema: String, on db: Connection) throws(FerryError) {
        guard !texts.isEmpty else { return }
        let triggers = try appTriggers(in: schema, on: db)
        let tables = Set(triggers.filter { texts[$0.name.lowercased()] != nil }.map { $0.table.lowercased() })
        for trigger in triggers where tables.contains(trigger.table.lowercased()) {
            try sqlite(db.execute("DROP TRIGGER \(q(schema)).\(q(trigger.name))"))
            try sqlite(db.execute(AppTriggerGuard.creation(of: texts[trigger.name.lowercased()] ?? trigger.sql, schema: schema)))
        }
    }
}
