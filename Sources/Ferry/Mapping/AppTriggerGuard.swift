import FerrySQL
import FerrySQLite

/// Keeps the app's INSERT triggers on a migrating target quiet while Ferry moves rows, and puts
/// them back as written when the target finishes (see `MigrationState`'s app triggers for the guard).
///
/// Only INSERT triggers need it: a move inserts into the target, and never updates or deletes a row
/// of it. Each runs on the writer, in a transaction (the app's, the registration's, the stepper's,
/// or one of its own), so a trigger is never lost between its drop and its re-creation.
enum AppTriggerGuard {
    /// Guards every INSERT trigger on `target` (in `main`, and the writer's own in `temp`) that is not
    /// guarded yet, and forgets the records of triggers that are gone or were replaced.
    /// - Throws: `FerryError.unsupportedDuringMigration` for a trigger Ferry cannot read.
    static func sync(target: String, on db: Connection) throws(FerryError) {
        let current = try insertTriggers(on: target, db)
        let records = try MigrationState.guardedAppTriggers(target: target, on: db)
        let stale = records.filter { record in !current.contains { $0.matches(record) && $0.sql == record.guardedSQL } }
        let changed = current.filter { trigger in !records.contains { trigger.matches($0) && trigger.sql == $0.guardedSQL } }
        guard !stale.isEmpty || !changed.isEmpty else { return }
        try inTransaction(db) { () throws(FerryError) in
            for record in stale { try MigrationState.forgetGuardedAppTrigger(record, on: db) }
            for trigger in changed {
                if let original = unguardedDefinition(of: trigger) {
                    // Guarded already, and rewritten by SQLite since (a column or table renamed):
                    // its original is the app's text as SQLite rewrote it, without the guard.
                    try MigrationState.recordGuardedAppTrigger(GuardedAppTrigger(schema: trigger.schema, name: trigger.name, target: target,
                                                                                 originalSQL: original, guardedSQL: trigger.sql), on: db)
                    continue
                }
                let guarded = try guardedDefinition(of: trigger, target: target)
                try sqlite(db.execute("DROP TRIGGER \(q(trigger.schema)).\(q(trigger.name))"))
                try sqlite(db.execute(guarded))
                let stored: String? = try sqlite(db.scalar("SELECT sql FROM \(q(trigger.schema)).sqlite_master WHERE type = 'trigger' AND name = ?",
                                                           [.text(trigger.name)]))
                try MigrationState.recordGuardedAppTrigger(GuardedAppTrigger(schema: trigger.schema, name: trigger.name, target: target,
                                                                             originalSQL: trigger.sql, guardedSQL: stored ?? guarded), on: db)
            }
        }
    }

    /// Puts `target`'s guarded triggers back as the app wrote them (the table finished). A trigger
    /// the app dropped or replaced since is left as it is.
    static func restore(target: String, on db: Connection) throws(FerryError) {
        let records = try MigrationState.guardedAppTriggers(target: target, on: db)
        guard !records.isEmpty else { return }
        let current = try insertTriggers(on: target, db)
        try inTransaction(db) { () throws(FerryError) in
            for record in records {
                if current.contains(where: { $0.matches(record) && $0.sql == record.guardedSQL }) {
                    try sqlite(db.execute("DROP TRIGGER \(q(record.schema)).\(q(record.name))"))
                    try sqlite(db.execute(creation(of: record.originalSQL, schema: record.schema)))
                }
                try MigrationState.forgetGuardedAppTrigger(record, on: db)
            }
        }
    }

    /// A trigger as `sqlite_master` holds it.
    struct StoredTrigger {
        let schema: String
        let name: String
        let sql: String
        func matches(_ record: GuardedAppTrigger) -> Bool {
            schema == record.schema && name.lowercased() == record.name.lowercased()
        }
    }

    /// The triggers on `target` in main and temp (Ferry's own redirect triggers excepted) whose
    /// event is INSERT.
    private static func insertTriggers(on target: String, _ db: Connection) throws(FerryError) -> [StoredTrigger] {
        var result: [StoredTrigger] = []
        let callRecords = try MigrationState.triggerWritesRecords(on: db)
        for schema in ["main", "temp"] {
            let rows = try sqlite(db.fetchAll("SELECT name, sql FROM \(schema).sqlite_master WHERE type = 'trigger' AND tbl_name = ? COLLATE NOCASE "
                                              + "AND name NOT LIKE 'ferry\\_redirect\\_%' ESCAPE '\\'", [.text(target)]))
            for row in rows {
                let name: String = try sqlite(row.column(0))
                // The text without the calls `AppTriggerWrites` adds, which come and go on their own.
                let sql = AppTriggerWrites.appText(stored: try sqlite(row.column(1, as: String.self)),
                                                   record: callRecords[TriggerWritesRecord.key(schema: schema, name: name)])
                guard isInsertTrigger(sql) else { continue }
                result.append(StoredTrigger(schema: schema, name: name, sql: sql))
            }
        }
        return result
    }

    /// True when `sql` is a trigger fired by INSERT. A text the front end cannot parse counts as
    /// one (`guardedDefinition` then refuses it by name).
    private static func isInsertTrigger(_ sql: String) -> Bool {
        guard case .createTrigger(let trigger)? = try? Parser.parseStatement(sql) else { return true }
        return trigger.event == .insert
    }

    /// The `CREATE TRIGGER` that stores `trigger` guarded, in its own schema.
    static func guardedDefinition(of trigger: StoredTrigger, target: String) throws(FerryError) -> String {
        guard case .createTrigger(var statement)? = try? Parser.parseStatement(trigger.sql),
              let condition = try? Parser.parseExpression(
                  MigrationState.appTriggerCondition + (statement.when.map { " AND (\(Printer().print($0)))" } ?? ""))
        else {
            throw .unsupportedDuringMigration(table: target, statement: trigger.sql,
                                              reason: "Ferry cannot read trigger \(trigger.name) to keep it from firing for the rows it moves")
        }
        statement.when = condition
        statement.temporary = trigger.schema == "temp"
        statement.ifNotExists = false
        statement.name.schema = nil
        return Printer().print(Statement.createTrigger(statement))
    }

    /// The app's trigger without Ferry's guard, as sqlite_master would store it, when `trigger` is
    /// stored guarded (its WHEN starts with the guard); nil otherwise.
    static func unguardedDefinition(of trigger: StoredTrigger) -> String? {
        guard case .createTrigger(var statement)? = try? Parser.parseStatement(trigger.sql),
              let when = statement.when,
              let condition = try? Parser.parseExpression(MigrationState.appTriggerCondition)
        else { return nil }
        // Compared as printed: parsed nodes carry where they were written.
        let printer = Printer()
        let guardText = printer.print(condition)
        if printer.print(when) == guardText {
            statement.when = nil
        } else if case .binary(let first, let terms) = when, printer.print(first) == guardText, terms.count == 1, terms[0].op == .and {
            statement.when = terms[0].rhs
        } else {
            return nil
        }
        statement.temporary = false  // sqlite_master's text never says TEMP
        return Printer().print(Statement.createTrigger(statement))
    }

    /// The statement that creates the trigger `sql` (sqlite_master's text, which never says TEMP)
    /// in `schema`.
    static func creation(of sql: String, schema: String) -> String {
        let prefix = "CREATE TRIGGER "
        guard schema == "temp", sql.uppercased().hasPrefix(prefix) else { return sql }
        return "CREATE TEMP TRIGGER " + sql.dropFirst(prefix.count)
    }

    /// Runs `body` in the open transaction (under a savepoint), or in one of its own that writes
    /// main alone (`AppTriggerWrites` uses it too).
    static func inTransaction(_ db: Connection, _ body: () throws(FerryError) -> Void) throws(FerryError) {
        if db.isInTransaction {
            try db.savepoint { () throws(FerryError) in try body() }
        } else {
            try MigrationState.writingMain(on: db) { () throws(FerryError) in try body() }
        }
    }
}
