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
    ///
    /// Also defines `ferry_trigger_fires(schema, trigger)`, which the `WHEN` of such a trigger
    /// calls: false while a statement that trigger's call runs is running, unless recursive
    /// triggers are on, as SQLite fires no trigger again from its own body.
    func defineTriggerRun(on db: Connection) throws(FerryError) {
        guard !db.hasProcedure(TriggerWriteMoves.runProcedure) else { return }
        let running = TriggerRuns()
        try sqlite(db.defineProcedure(TriggerWriteMoves.runProcedure) { [self] db, arguments throws(SQLiteError) in
            do throws(FerryError) {
                try runTriggerStatement(arguments, running: running, on: db)
            } catch {
                throw .sqlite(code: error.resultCode ?? .error, message: "\(error)", sql: nil)
            }
        })
        try sqlite(db.defineQueryFunction(TriggerWriteMoves.conditionFunction) { [self] db, arguments throws(SQLiteError) in
            do throws(FerryError) {
                return try triggerCondition(arguments, on: db)
            } catch {
                throw .sqlite(code: error.resultCode ?? .error, message: "\(error)", sql: nil)
            }
        })
        try sqlite(db.defineQueryFunction(TriggerWriteMoves.rowsFunction) { [self] db, arguments throws(SQLiteError) in
            do throws(FerryError) {
                return try triggerStatementYieldsRows(arguments, on: db)
            } catch {
                throw .sqlite(code: error.resultCode ?? .error, message: "\(error)", sql: nil)
            }
        })
        try sqlite(db.defineQueryFunction(TriggerWriteMoves.firesFunction) { db, arguments throws(SQLiteError) in
            guard arguments.count == 2, case .text(let schema) = arguments[0], case .text(let name) = arguments[1] else {
                throw .misuse("\(TriggerWriteMoves.firesFunction) takes a trigger's schema and its name")
            }
            guard running.depth(of: TriggerRuns.key(schema, name)) > 0 else { return .integer(1) }
            return .integer(try db.scalar("PRAGMA recursive_triggers", as: Int64.self) ?? 0)
        })
    }

    /// `ferry_trigger_when(schema, trigger, values...)`: the value of the app's `WHEN` condition,
    /// read as the app's own `SELECT (<condition>)` would read it (through the rewriter).
    private func triggerCondition(_ arguments: [Value], on db: Connection) throws(FerryError) -> Value {
        guard arguments.count >= 2, case .text(let schema) = arguments[0], schema == "main" || schema == "temp",
              case .text(let name) = arguments[1]
        else { throw .misuse("\(TriggerWriteMoves.conditionFunction) takes a trigger's schema and its name") }
        guard let stored = try MigrationState.storedTrigger(schema: schema, name: name, on: db), stored.record != nil else {
            throw .misuse("trigger \(schema).\(name) has no condition recorded for \(TriggerWriteMoves.conditionFunction)")
        }
        let app = AppTriggerWrites.appText(stored: stored.sql, record: stored.record)
        let query: String?
        do throws(SQLSyntaxError) { query = try TriggerWriteMoves.standaloneCondition(app) } catch {
            throw .unsupportedDuringMigration(table: "", statement: app, reason: "Ferry cannot read this trigger's condition: \(error.message)")
        }
        guard let query else { return .integer(1) }
        let plan = try currentRedirector(on: db).redirector.plan(query)
        let prepared = try sqlite(db.prepare(plan.statement.sql))
        return try sqlite(prepared.fetchOne(.positional(Array(arguments.dropFirst(2)))))?[0] ?? .null
    }

    /// `ferry_trigger_any(schema, trigger, statement, values...)`: 1 when the app's body
    /// statement `SELECT RAISE(...) ...` yields a row, read through the rewriter.
    private func triggerStatementYieldsRows(_ arguments: [Value], on db: Connection) throws(FerryError) -> Value {
        guard arguments.count >= 3, case .text(let schema) = arguments[0], schema == "main" || schema == "temp",
              case .text(let name) = arguments[1], case .integer(let index) = arguments[2]
        else { throw .misuse("\(TriggerWriteMoves.rowsFunction) takes a trigger's schema, its name and a statement's index") }
        guard let stored = try MigrationState.storedTrigger(schema: schema, name: name, on: db), stored.record != nil else {
            throw .misuse("trigger \(schema).\(name) has no statement recorded for \(TriggerWriteMoves.rowsFunction)")
        }
        let app = AppTriggerWrites.appText(stored: stored.sql, record: stored.record)
        let query: String?
        do throws(SQLSyntaxError) { query = try TriggerWriteMoves.standaloneExistence(app, index: Int(index)) } catch {
            throw .unsupportedDuringMigration(table: "", statement: app, reason: "Ferry cannot read this trigger's body: \(error.message)")
        }
        guard let query else { throw .misuse("trigger \(schema).\(name) has no statement \(index) that raises") }
        let plan = try currentRedirector(on: db).redirector.plan(query)
        let prepared = try sqlite(db.prepare(plan.statement.sql))
        return try sqlite(prepared.fetchOne(.positional(Array(arguments.dropFirst(3)))))?[0] ?? .null
    }

    /// `ferry_trigger_run`'s body: the arguments as `moveAheadOfTriggerStatement`'s.
    private func runTriggerStatement(_ arguments: [Value], running: TriggerRuns, on db: Connection) throws(FerryError) {
        guard arguments.count >= 3, case .text(let schema) = arguments[0], schema == "main" || schema == "temp",
              case .text(let name) = arguments[1], case .integer(let index) = arguments[2]
        else { throw .misuse("\(TriggerWriteMoves.runProcedure) takes a trigger's schema, its name and a statement's index") }
        // Recursive triggers: SQLite stops at 1,000 levels of triggers; a statement run here starts
        // a chain of its own, and each level holds a nested statement on the stack: fewer.
        let key = TriggerRuns.key(schema, name)
        guard running.depth(of: key) < TriggerRuns.maximumDepth else {
            throw .sqlite(code: .error, message: "too many levels of trigger recursion (\(TriggerRuns.maximumDepth) through "
                          + "\(TriggerWriteMoves.runProcedure) while a table it reads migrates)", sql: nil)
        }
        running.enter(key)
        defer { running.leave(key) }
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

/// The app's triggers whose statement `ferry_trigger_run` is running, with how deep, on one
/// connection (the writer's: triggers fire on writes).
final class TriggerRuns: @unchecked Sendable {
    /// How deep a trigger may run its own statements (recursive triggers on).
    static let maximumDepth = 64
    private var depths: [String: Int] = [:]

    static func key(_ schema: String, _ name: String) -> String { schema + "." + name.lowercased() }
    func depth(of key: String) -> Int { depths[key] ?? 0 }
    func enter(_ key: String) { depths[key, default: 0] += 1 }
    func leave(_ key: String) { depths[key] = depths[key].map { $0 - 1 } }
}
