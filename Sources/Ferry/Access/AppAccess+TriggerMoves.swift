import FerrySQL
import FerrySQLite
import Synchronization

/// The procedure the app's triggers call before a statement of their body that updates or deletes
/// rows of a migrating table (`AppTriggerWrites`, `TriggerWriteMoves`): it moves the pending rows
/// the statement may touch into the target, with the moves the rewriter plans for the same
/// statement run by the app, so the body's statement then meets every row of the finished table.
extension AppAccess {
    /// Defines `ferry_trigger_moves(schema, trigger, statement, values...)` on `db`, once.
    func defineTriggerMoves(on db: Connection) throws(FerryError) {
        guard !db.hasProcedure(TriggerWriteMoves.procedure) else { return }
        try sqlite(db.defineProcedure(TriggerWriteMoves.procedure) { [self] db, arguments throws(SQLiteError) in
            do throws(FerryError) {
                try db.withStatementTrust(.trusted) { () throws(FerryError) in try moveAheadOfTriggerStatement(arguments, on: db) }
            } catch {
                throw .sqlite(code: error.resultCode ?? .error, message: "\(error)", sql: nil)
            }
        })
    }

    /// Defines `ferry_trigger_run(schema, trigger, statement, values...)` on `db`, once: the
    /// procedure the app's triggers call in place of a body statement that reads a migrating table
    /// (`TriggerWriteMoves.withCalls`). It runs that statement as the app's own would run: the
    /// moves the rewriter plans for it, then the statement with its reads rewritten, inside the
    /// trigger (what it writes is the trigger's: `changes()` and `last_insert_rowid()` of the
    /// app's statement stay as SQLite leaves them after a trigger).
    func defineTriggerRun(on db: Connection) throws(FerryError) {
        guard !db.hasProcedure(TriggerWriteMoves.runProcedure) else { return }
        try sqlite(db.defineProcedure(TriggerWriteMoves.runProcedure) { [self] db, arguments throws(SQLiteError) in
            do throws(FerryError) {
                try runTriggerStatement(arguments, on: db)
            } catch {
                throw .sqlite(code: error.resultCode ?? .error, message: "\(error)", sql: nil)
            }
        })
    }

    /// `ferry_trigger_run`'s body: the arguments as `moveAheadOfTriggerStatement`'s.
    private func runTriggerStatement(_ arguments: [Value], on db: Connection) throws(FerryError) {
        guard arguments.count >= 3, case .text(let schema) = arguments[0], schema == "main" || schema == "temp",
              case .text(let name) = arguments[1], case .integer(let index) = arguments[2]
        else { throw .misuse("\(TriggerWriteMoves.runProcedure) takes a trigger's schema, its name and a statement's index") }
        guard let stored = try MigrationState.storedTrigger(schema: schema, name: name, on: db), stored.record != nil,
              let statement = try triggerStatements.statement(index: Int(index), of: AppTriggerWrites.appText(stored: stored.sql, record: stored.record))
        else { throw .misuse("trigger \(schema).\(name) has no statement \(index) recorded for \(TriggerWriteMoves.runProcedure)") }
        let values = StatementArguments.positional(Array(arguments.dropFirst(3)))
        let plan = try currentRedirector(on: db).redirector.plan(statement)
        try db.invisibly { () throws(FerryError) in
            if case .moveRows(let moves)? = plan.preparation {
                try db.withStatementTrust(.trusted) { () throws(FerryError) in try moves.run(on: db, arguments: values) }
            }
            // Prepared for this call: the same statement may run nested in itself (a trigger that fires itself).
            let prepared = try sqlite(db.prepare(plan.statement.sql))
            try sqlite(prepared.execute(values))
        }
    }

    /// The procedure's body: `arguments` are the trigger's schema and name, the statement's index
    /// in its body as the app wrote it (recorded by `AppTriggerWrites`), and the values of its
    /// `NEW.x`/`OLD.x`, in order.
    private func moveAheadOfTriggerStatement(_ arguments: [Value], on db: Connection) throws(FerryError) {
        guard arguments.count >= 3, case .text(let schema) = arguments[0], schema == "main" || schema == "temp",
              case .text(let name) = arguments[1], case .integer(let index) = arguments[2]
        else { throw .misuse("\(TriggerWriteMoves.procedure) takes a trigger's schema, its name and a statement's index") }
        let redirector = try currentRedirector(on: db).redirector
        // (The calls exist only in a catalog that has their records' table: registration creates it.)
        guard !redirector.tables.isEmpty, let stored = try MigrationState.storedTrigger(schema: schema, name: name, on: db) else { return }
        let sql = AppTriggerWrites.appText(stored: stored.sql, record: stored.record)
        let statement = try triggerStatements.statement(index: Int(index), of: sql)
        guard let statement else { return }
        guard case .moveRows(let moves)? = try redirector.plan(statement).preparation else { return }
        try db.invisibly { () throws(FerryError) in try moves.run(on: db, arguments: .positional(Array(arguments.dropFirst(3)))) }
    }
}

/// The statements of the app's triggers as statements of their own (`TriggerWriteMoves`), by
/// trigger text and index: a trigger fires for every row its statement touches.
final class TriggerStatementCache: Sendable {
    private let entries = Mutex<[String: String?]>([:])

    /// Body statement `index` of the trigger `sql`, its row's values as parameters.
    func statement(index: Int, of sql: String) throws(FerryError) -> String? {
        let key = "\(index):" + sql
        if let cached = entries.withLock({ $0[key] }) { return cached }
        let statement: String?
        do throws(SQLSyntaxError) {
            statement = try TriggerWriteMoves.standaloneStatement(sql, index: index)
        } catch {
            throw .unsupportedDuringMigration(table: "", statement: sql, reason: "Ferry cannot read this trigger's body: \(error.message)")
        }
        entries.withLock { entries in
            if entries.count >= 256 { entries.removeAll() }
            entries[key] = statement
        }
        return statement
    }
}
