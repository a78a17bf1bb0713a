import FerrySQL
import FerrySQLite
import Synchronization

/// The functions the app's triggers call while a table they read or write migrates
/// (`AppTriggerWrites` puts the calls in, `TriggerWriteMoves` writes them), so that their body
/// meets every row of the finished table:
/// - `ferry_trigger_moves(schema, trigger, i, values...)` before a statement that updates or
///   deletes rows of a migrating table: moves the pending rows it may touch into the target, with
///   the moves the rewriter plans for the same statement run by the app;
/// - `ferry_trigger_run(schema, trigger, i, values...)` in place of a statement that reads one:
///   runs it as the app's own would run (its moves, then its reads rewritten), inside the trigger;
/// - `ferry_trigger_when(schema, trigger, values...)` in place of a `WHEN` that reads one, and
///   `ferry_trigger_any(schema, trigger, i, values...)` under a `SELECT RAISE(...)` that reads
///   one: the value of the condition, whether the statement yields a row, read through the
///   rewriter;
/// - `ferry_trigger_fires(schema, trigger)` in the `WHEN` of a trigger with `ferry_trigger_run`
///   calls: false while such a call of that trigger runs (SQLite fires no trigger again from its
///   own body unless recursive triggers are on).
/// `values` are the trigger's `NEW.x`/`OLD.x`, in the order `TriggerWriteMoves` numbers them; the
/// statements are read from the app's text as Ferry recorded it.
extension AppAccess {
    /// Defines `ferry_trigger_moves` on `db`, once.
    func defineTriggerMoves(on db: Connection) throws(FerryError) {
        guard !db.hasProcedure(TriggerWriteMoves.procedure) else { return }
        try sqlite(db.defineProcedure(TriggerWriteMoves.procedure) { [self] db, arguments throws(SQLiteError) in
            try Self.surfacing { () throws(FerryError) in
                try db.withStatementTrust(.trusted) { () throws(FerryError) in try moveAheadOfTriggerStatement(arguments, on: db) }
            }
        })
    }

    /// Defines `ferry_trigger_run`, `ferry_trigger_when`, `ferry_trigger_any` and
    /// `ferry_trigger_fires` on `db`, once.
    func defineTriggerRun(on db: Connection) throws(FerryError) {
        guard !db.hasProcedure(TriggerWriteMoves.runProcedure) else { return }
        let running = TriggerRuns()
        try sqlite(db.defineProcedure(TriggerWriteMoves.runProcedure) { [self] db, arguments throws(SQLiteError) in
            try Self.surfacing { () throws(FerryError) in try runTriggerStatement(arguments, running: running, on: db) }
        })
        try sqlite(db.defineQueryFunction(TriggerWriteMoves.conditionFunction) { [self] db, arguments throws(SQLiteError) in
            try Self.surfacing { () throws(FerryError) in
                let call = try TriggerCall(arguments, function: TriggerWriteMoves.conditionFunction, withIndex: false)
                let app = try call.appText(on: db)
                guard let query = try Self.reading(app, { () throws(SQLSyntaxError) in try TriggerWriteMoves.standaloneCondition(app) })
                else { return .integer(1) }
                return try firstValue(of: query, call.values, on: db)
            }
        })
        try sqlite(db.defineQueryFunction(TriggerWriteMoves.rowsFunction) { [self] db, arguments throws(SQLiteError) in
            try Self.surfacing { () throws(FerryError) in
                let call = try TriggerCall(arguments, function: TriggerWriteMoves.rowsFunction, withIndex: true)
                let app = try call.appText(on: db)
                guard let query = try Self.reading(app, { () throws(SQLSyntaxError) in try TriggerWriteMoves.standaloneExistence(app, index: call.index) })
                else { throw .misuse("trigger \(call.schema).\(call.name) has no statement \(call.index) that raises") }
                return try firstValue(of: query, call.values, on: db)
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

    /// `ferry_trigger_run`: the statement, run as the app's own would run, inside the trigger
    /// (what it writes is the trigger's: `changes()` and `last_insert_rowid()` of the app's
    /// statement stay as SQLite leaves them after a trigger).
    private func runTriggerStatement(_ arguments: [Value], running: TriggerRuns, on db: Connection) throws(FerryError) {
        let call = try TriggerCall(arguments, function: TriggerWriteMoves.runProcedure, withIndex: true)
        // Recursive triggers: SQLite stops at 1,000 levels of triggers; a statement run here starts
        // a chain of its own, and each level holds a nested statement on the stack: fewer.
        let key = TriggerRuns.key(call.schema, call.name)
        guard running.depth(of: key) < TriggerRuns.maximumDepth else {
            throw .sqlite(code: .error, message: "too many levels of trigger recursion (\(TriggerRuns.maximumDepth) through "
                          + "\(TriggerWriteMoves.runProcedure) while a table it reads migrates)", sql: nil)
        }
        running.enter(key)
        defer { running.leave(key) }
        guard let statement = try triggerStatements.statement(index: call.index, of: try call.appText(on: db)) else {
            throw .misuse("trigger \(call.schema).\(call.name) has no statement \(call.index) recorded for \(TriggerWriteMoves.runProcedure)")
        }
        let plan = try currentRedirector(on: db).redirector.plan(statement)
        try db.invisibly { () throws(FerryError) in
            if case .moveRows(let moves)? = plan.preparation {
                try db.withStatementTrust(.trusted) { () throws(FerryError) in try moves.run(on: db, arguments: call.values) }
            }
            // Prepared for this call: the same statement may run nested in itself (a trigger that fires itself).
            let prepared = try sqlite(db.prepare(plan.statement.sql))
            try sqlite(prepared.execute(call.values))
        }
    }

    /// `ferry_trigger_moves`: the moves the rewriter plans for the statement.
    private func moveAheadOfTriggerStatement(_ arguments: [Value], on db: Connection) throws(FerryError) {
        let call = try TriggerCall(arguments, function: TriggerWriteMoves.procedure, withIndex: true)
        let redirector = try currentRedirector(on: db).redirector
        // (The calls exist only in a catalog that has their records' table: registration creates it.)
        guard !redirector.tables.isEmpty, let stored = try MigrationState.storedTrigger(schema: call.schema, name: call.name, on: db),
              let statement = try triggerStatements.statement(index: call.index, of: AppTriggerWrites.appText(stored: stored.sql, record: stored.record)),
              case .moveRows(let moves)? = try redirector.plan(statement).preparation
        else { return }
        try db.invisibly { () throws(FerryError) in try moves.run(on: db, arguments: call.values) }
    }

    /// The first column of the first row of the app's `query`, read through the rewriter (NULL
    /// when it has none).
    private func firstValue(of query: String, _ values: StatementArguments, on db: Connection) throws(FerryError) -> Value {
        let plan = try currentRedirector(on: db).redirector.plan(query)
        let prepared = try sqlite(db.prepare(plan.statement.sql))
        return try sqlite(prepared.fetchOne(values))?[0] ?? .null
    }

    /// What `read` makes of the trigger `app`; its syntax error as Ferry's.
    private static func reading(_ app: String, _ read: () throws(SQLSyntaxError) -> String?) throws(FerryError) -> String? {
        do throws(SQLSyntaxError) { return try read() } catch {
            throw .unsupportedDuringMigration(table: "", statement: app, reason: "Ferry cannot read this trigger: \(error.message)")
        }
    }

    /// Runs a function's body; its error as the calling statement's (message and result code).
    private static func surfacing<T>(_ body: () throws(FerryError) -> T) throws(SQLiteError) -> T {
        do throws(FerryError) { return try body() } catch {
            throw .sqlite(code: error.resultCode ?? .error, message: "\(error)", sql: nil)
        }
    }
}

/// One call of Ferry's functions from an app trigger: the trigger's schema and name, the index of
/// a body statement (when the function takes one), and the values of its `NEW.x`/`OLD.x`.
struct TriggerCall {
    let schema: String
    let name: String
    let index: Int
    let values: StatementArguments

    /// The call of `function` with `arguments` (`schema, name[, index], values...`).
    init(_ arguments: [Value], function: String, withIndex: Bool) throws(FerryError) {
        let fixed = withIndex ? 3 : 2
        guard arguments.count >= fixed, case .text(let schema) = arguments[0], schema == "main" || schema == "temp",
              case .text(let name) = arguments[1] else {
            throw .misuse("\(function) takes a trigger's schema and its name" + (withIndex ? ", and a statement's index" : ""))
        }
        var index = 0
        if withIndex {
            guard case .integer(let value) = arguments[2] else { throw .misuse("\(function) takes a statement's index third") }
            index = Int(value)
        }
        self.schema = schema
        self.name = name
        self.index = index
        self.values = .positional(Array(arguments.dropFirst(fixed)))
    }

    /// The trigger's text as the app wrote it (Ferry records it when it adds the calls).
    func appText(on db: Connection) throws(FerryError) -> String {
        guard let stored = try MigrationState.storedTrigger(schema: schema, name: name, on: db), stored.record != nil else {
            throw .misuse("trigger \(schema).\(name) has no text recorded for Ferry's calls")
        }
        return AppTriggerWrites.appText(stored: stored.sql, record: stored.record)
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
