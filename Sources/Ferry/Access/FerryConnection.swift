import FerrySQL
import FerrySQLite
import Synchronization

/// The app's handle on a `FerryDatabase` inside `read { }` and `write { }`.
///
/// Every statement goes through Ferry's rewriter: reads of a migrating table see target rows plus
/// the source rows not moved yet, and writes behave exactly as on the finished table (same rows
/// changed, same `changes`, `lastInsertRowid`, `RETURNING` rows and constraint errors). There is no
/// way around it from this handle; statements that cannot be made exact throw
/// `FerryError.unsupportedDuringMigration` and change nothing. Statements that name no migrating
/// table run as written.
///
/// Do not keep the handle beyond the closure that received it.
public final class FerryConnection: DatabaseConnection {
    let connection: Connection
    /// The redirector of the migrating tables; a `DROP TABLE` of one ends its migration for the
    /// rest of the transaction.
    private(set) var redirector: StatementRedirector
    let isWriter: Bool
    /// Per migrating table (by registered name), a value at or below its cursor in this
    /// connection's snapshot: a statement pinning a key at or below it takes its `KeyShortcut`.
    let cursorFloors: [String: Int64]
    /// True when the last statement took its `KeyShortcut` (for tests).
    private(set) var tookKeyShortcut = false
    /// The writer's `changes` as the app's own statements left it (Ferry's steps run statements
    /// of their own on the same connection; SQLite cannot restore its counter, Ferry keeps it).
    let appChanges: ChangesCounter?

    /// Sources this connection could not attach (by schema): statements that need one are refused.
    let unavailableSources: [String: FerryError]
    /// A read's handle on the writer (single-connection mode): statements that write are refused
    /// before they run, as a reader's read-only connection refuses them.
    let refusesWrites: Bool

    /// Installs the redirect triggers of a redirector again, inside the transaction (writer only).
    private let reinstallTriggers: ((StatementRedirector) throws(FerryError) -> Void)?
    /// The redirector of the schema as this transaction sees it, after a view changed (writer only).
    private let rebuildRedirector: (() throws(FerryError) -> StatementRedirector)?
    /// The migrating tables a `DROP TABLE` of this transaction ended (lower-cased).
    private(set) var endedTables: Set<String> = []
    /// How many `inSavepoint` calls are open.
    var savepointDepth = 0
    /// True once the `read { }` or `write { }` that received the handle ended (`end()`): its
    /// connection went back to the pool, and every use of the handle or its cursors throws.
    private(set) var hasEnded = false
    /// The cursors of this handle that may still hold a statement (`fetchCursor`), ended with it.
    private var cursors: [WeakCursor] = []

    init(connection: Connection, redirector: StatementRedirector, isWriter: Bool, cursorFloors: [String: Int64] = [:], appChanges: ChangesCounter? = nil,
         unavailableSources: [String: FerryError] = [:], refusesWrites: Bool = false,
         reinstallTriggers: ((StatementRedirector) throws(FerryError) -> Void)? = nil,
         rebuildRedirector: (() throws(FerryError) -> StatementRedirector)? = nil) {
        self.connection = connection
        self.redirector = redirector
        self.isWriter = isWriter
        self.cursorFloors = cursorFloors
        self.appChanges = appChanges
        self.unavailableSources = unavailableSources
        self.refusesWrites = refusesWrites
        self.reinstallTriggers = reinstallTriggers
        self.rebuildRedirector = rebuildRedirector
    }

    /// Runs one statement, or a script of several when there are no arguments.
    public func execute(_ sql: String, _ arguments: StatementArguments = .none) throws(FerryError) {
        for statement in try statements(sql, arguments: arguments) {
            try run(statement, arguments) { prepared throws(FerryError) in try sqlite(prepared.execute()) }
        }
    }

    /// Runs a query and returns every row.
    public func fetchAll(_ sql: String, _ arguments: StatementArguments = .none) throws(FerryError) -> [Row] {
        try run(sql, arguments) { statement throws(FerryError) in try sqlite(statement.fetchAll()) }
    }

    /// Runs one statement and returns its column names (also when it returns no row) and rows.
    public func query(_ sql: String, _ arguments: StatementArguments = .none) throws(FerryError) -> (columns: [String], rows: [Row]) {
        try run(sql, arguments) { statement throws(FerryError) in
            // Names after the rows: stepping may re-prepare the statement (the schema changed), and
            // the names are those of the statement that ran.
            let rows = try sqlite(statement.fetchAll())
            return (statement.columnNames, rows)
        }
    }

    /// Runs a query and returns its first row, if any.
    public func fetchOne(_ sql: String, _ arguments: StatementArguments = .none) throws(FerryError) -> Row? {
        try run(sql, arguments) { statement throws(FerryError) in try sqlite(statement.fetchOne()) }
    }

    /// Runs one statement of the app: redirected, its moves first, then `body` on the prepared
    /// statement; afterwards what the statement changed for the redirection.
    private func run<T>(_ sql: String, _ arguments: StatementArguments,
                        _ body: (FerrySQLite.Statement) throws(FerryError) -> T) throws(FerryError) -> T {
        try asApp(sql) { () throws(FerryError) in
            // An ALTER TABLE makes SQLite rewrite the triggers' text: it meets the app's text, not
            // Ferry's calls (`AppTriggerWrites.restoreAppTexts`), and the calls come back after it.
            var planned: StatementPlan?
            if isWriter, connection.isInTransaction { planned = try redirector.plan(sql) }
            let restoresTriggers = planned?.rewritesTriggerText ?? false
            if restoresTriggers { try syncAppTriggers(restoringAppTexts: true) }
            let (statement, plan): (FerrySQLite.Statement, StatementPlan)
            do throws(FerryError) {
                (statement, plan) = try prepareRedirected(sql, arguments: arguments, planned: planned)
            } catch {
                if restoresTriggers { try? syncAppTriggers(restoringAppTexts: false) }
                throw error
            }
            // Also after a failure: SQLite counts a statement that ran and failed. Not one that
            // never ran: a cached statement SQLite could not compile again after a schema change
            // fails as its prepare would have (the finished table never runs it either).
            var ran = true
            defer { if ran { recordChanges(of: statement) } }
            let rowidBefore = connection.lastInsertRowid
            let result: T
            do throws(FerryError) {
                result = try guardingAttach(statement, arguments: arguments) { () throws(FerryError) in try body(statement) }
            } catch {
                // A constraint failure (the usual one) happens while the statement runs: only other
                // failures may be a compile that failed again.
                if error.resultCode?.primary != .constraint { ran = (try? connection.prepare(statement.sql)) != nil }
                if error.resultCode == .constraintForeignKey, (try? restoresRowidAfterForeignKeyFailure(sql)) == true {
                    connection.setLastInsertRowid(rowidBefore)
                }
                if plan.has(.columnDropped), let reinstallTriggers {  // the column stays: so do the triggers
                    try? connection.withStatementTrust(.trusted) { () throws(FerryError) in try reinstallTriggers(redirector) }
                }
                if restoresTriggers { try? syncAppTriggers(restoringAppTexts: false) }
                throw error
            }
            // What Ferry writes after a schema statement stays invisible to the app.
            let lastRowid = connection.lastInsertRowid
            defer { connection.setLastInsertRowid(lastRowid) }
            if plan.has(.columnDropped) { appChanges?.engineStateChanged.withLock { $0 = true } }  // the engine reloads the shape
            if plan.addedColumn != nil || plan.renamedColumn != nil || plan.renamedTable != nil {
                let visibleChanges = connection.visibleChanges  // Ferry's records stay invisible to changes() too
                defer { connection.reportChanges(visibleChanges) }
                try connection.withStatementTrust(.trusted) { () throws(FerryError) in
                    if let added = plan.addedColumn {
                        try MigrationState.recordAddedColumn(added.column, target: added.table, on: connection)
                    }
                    if let renamed = plan.renamedColumn {
                        try MigrationState.recordRenamedColumn(renamed.old, to: renamed.new, target: renamed.table, on: connection)
                    }
                    if let renamed = plan.renamedTable {
                        try MigrationState.recordRenamedTable(renamed.old, to: renamed.new, on: connection)
                    }
                }
                appChanges?.engineStateChanged.withLock { $0 = true }  // the engine reloads the table's shape
            }
            if plan.has(.schemaChanged), let rebuildRedirector {
                var rebuilt = try connection.withStatementTrust(.trusted) { () throws(FerryError) in try rebuildRedirector() }
                for table in endedTables { rebuilt = rebuilt.removing(table) }
                redirector = rebuilt
            }
            // After the rebuild: a renamed table or key column is known under its new name.
            // (Reinstalling guards the app's INSERT triggers too.)
            if plan.has(.uniqueKeysChanged), let reinstallTriggers {
                try connection.withStatementTrust(.trusted) { () throws(FerryError) in try reinstallTriggers(redirector) }
            } else if plan.has(.triggersChanged) {
                try connection.withStatementTrust(.trusted) { () throws(FerryError) in
                    for table in redirector.tables.values { try AppTriggerGuard.sync(target: table.mapping.targetName, on: connection) }
                    try AppTriggerWrites.sync(on: connection)
                }
            }
            if restoresTriggers { try syncAppTriggers(restoringAppTexts: false) }
            return result
        }
    }

    /// Puts the app's text back in its triggers (`restoringAppTexts`), or Ferry's calls in them
    /// (`AppTriggerWrites`), invisibly to the app's `changes()` and last rowid.
    private func syncAppTriggers(restoringAppTexts: Bool) throws(FerryError) {
        try connection.invisibly { () throws(FerryError) in
            try connection.withStatementTrust(.trusted) { () throws(FerryError) in
                if restoringAppTexts { try AppTriggerWrites.restoreAppTexts(on: connection) } else { try AppTriggerWrites.sync(on: connection) }
            }
        }
    }

    /// True when `sql`, an INSERT that failed its foreign-key check, writes a table the app put no
    /// trigger on. SQLite checks such an insert before writing the row when the table has no
    /// trigger, and `last_insert_rowid()` stays as it was; with a trigger (Ferry's, here) the row is
    /// written first and its rowid kept. The finished table has no trigger: the rowid is restored.
    private func restoresRowidAfterForeignKeyFailure(_ sql: String) throws(FerryError) -> Bool {
        guard case .insert(let insert)? = try? Parser.parseStatement(sql) else { return false }
        let table = insert.table.name.name
        let appTriggers = try connection.withStatementTrust(.trusted) { () throws(FerryError) -> Int in
            try sqlite(connection.scalar("""
                SELECT (SELECT count(*) FROM main.sqlite_master WHERE type = 'trigger' AND tbl_name = ?1 COLLATE NOCASE)
                     + (SELECT count(*) FROM temp.sqlite_master WHERE type = 'trigger' AND tbl_name = ?1 COLLATE NOCASE
                        AND name NOT LIKE 'ferry\\_redirect\\_%' ESCAPE '\\')
                """, [.text(table)], as: Int.self)) ?? 0
        }
        return appTriggers == 0
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE, as on the finished table.
    public var changes: Int { appChanges?.value.withLock { $0 } ?? connection.changes }

    /// The rowid of the last inserted row, as on the finished table.
    public var lastInsertRowid: Int64 { connection.lastInsertRowid }

    /// True inside an explicit transaction.
    public var isInTransaction: Bool { connection.isInTransaction }

    // MARK: Internals

    /// Puts back the redirection of an earlier point of the transaction (a savepoint rolled back).
    func restore(redirector: StatementRedirector, endedTables: Set<String>) {
        self.redirector = redirector
        self.endedTables = endedTables
    }

    /// Runs `body` as Ferry's own statements (reads of Ferry's reserved tables, say), not the app's.
    func asFerry<T>(_ body: () throws(FerryError) -> T) throws(FerryError) -> T {
        try requireOpen()
        return try connection.withStatementTrust(.trusted, body)
    }

    /// Runs `body` with the handle, then ends the handle (`end()`): what `read { }` and
    /// `write { }` do with the handle they pass their body, inside their transaction.
    func scoped<T, E: Error>(_ body: (FerryConnection) throws(E) -> T) throws(E) -> T {
        defer { end() }
        return try body(self)
    }

    /// Ends the handle when its `read { }` or `write { }` ends, before its transaction does: its
    /// cursors let their statements go (resetting a statement ends its read of the snapshot), and
    /// every later use of the handle or of a cursor throws `FerryError.misuse` instead of running
    /// on a connection that now serves someone else.
    func end() {
        hasEnded = true
        for cursor in cursors { cursor.cursor?.release() }
        cursors.removeAll()
    }

    /// Keeps `cursor` to end it with the handle (its statement must go before the transaction ends).
    func register(_ cursor: any CursorReleasing) {
        cursors.removeAll { $0.cursor == nil }
        cursors.append(WeakCursor(cursor: cursor))
    }

    /// Throws `FerryError.misuse` once the handle's `read { }` or `write { }` ended.
    func requireOpen() throws(FerryError) {
        if hasEnded {
            throw .misuse("this FerryConnection (or a cursor of it) was used after the read { } or write { } that passed it ended; use it inside the closure only")
        }
    }

    /// Runs `body` with the app's statements compiled as untrusted: the database's `AccessPolicy`
    /// (SQLite's authorizer) refuses what would reach Ferry's catalog, its sources, their files
    /// and keys. A refusal becomes `FerryError.accessDenied`, naming what was protected.
    func asApp<T>(_ sql: String, _ body: () throws(FerryError) -> T) throws(FerryError) -> T {
        try requireOpen()
        connection.clearAuthorizerDenial()
        do {
            return try connection.withStatementTrust(.untrusted, body)
        } catch {
            if let denied = AccessDenial.error(for: error, sql: sql, on: connection) { throw denied }
            // The app's statement is echoed in the error: never a key it carries.
            if case .sqlite(let code, let message, let statement) = error, SecretRedaction.namesKey(sql) {
                throw .sqlite(code: code, message: SecretRedaction.redactingLiterals(message), sql: statement.map(SecretRedaction.redactingLiterals))
            }
            throw error
        }
    }

    /// Runs `statement`; when it is an `ATTACH` (as SQLite's authorizer saw it compile), checks the
    /// schema name it chooses: SQLite shows an authorizer the file of an `ATTACH`, not its name, and
    /// Ferry's names (`ferry_src_N`, ...) must keep meaning Ferry's files. A reserved name, or one
    /// computed by an expression, is refused before the statement runs (running it would create
    /// the file); a database that still got attached under a reserved name is detached at once and
    /// the statement fails.
    private func guardingAttach<T>(_ statement: FerrySQLite.Statement, arguments: StatementArguments,
                                   _ body: () throws(FerryError) -> T) throws(FerryError) -> T {
        guard statement.requested(.attach) else { return try body() }
        switch AttachSchemaName.read(statement.sql, arguments: arguments) {
        case .name(let name) where AccessPolicy.isReservedSchema(name):
            throw .accessDenied(object: "ATTACH as \(name)", statement: SecretRedaction.redactingKeyLiterals(statement.sql),
                                reason: "uses a schema name Ferry reserves for its migration sources (ferry_src_, ferry_plan_, ferry_export)")
        case .computed:
            throw .accessDenied(object: "ATTACH", statement: SecretRedaction.redactingKeyLiterals(statement.sql),
                                reason: "cannot be checked: write the schema name of ATTACH as a name, a string literal or a bound value")
        case .name, .notAttach:
            break
        }
        let before = try schemaNames()
        let result = try body()
        for name in try schemaNames().subtracting(before) where AccessPolicy.isReservedSchema(name) {
            try connection.withStatementTrust(.trusted) { () throws(FerryError) in try sqlite(connection.detach(name)) }
            throw .accessDenied(object: "ATTACH as \(name)", statement: SecretRedaction.redactingKeyLiterals(statement.sql),
                                reason: "uses a schema name Ferry reserves for its migration sources (ferry_src_, ferry_plan_, ferry_export)")
        }
        return result
    }

    private func schemaNames() throws(FerryError) -> Set<String> {
        Set(try sqlite(connection.schemaNames()))
    }

    /// Keeps the app's `changes` after an INSERT, UPDATE or DELETE (the statements SQLite counts),
    /// as SQLite's authorizer saw the statement compile, whatever its text starts with (a comment,
    /// a CTE). A schema statement also writes (the schema table), and leaves `changes` as it was.
    private func recordChanges(of statement: FerrySQLite.Statement) {
        guard let appChanges, !statement.isReadOnly,
              statement.requested(.insert) || statement.requested(.update) || statement.requested(.delete),
              !Self.schemaActions.contains(where: statement.requested)
        else { return }
        let value = connection.changes
        appChanges.value.withLock { $0 = value }
        connection.endReportedChanges()  // SQL's changes() is this statement's count
    }

    /// The actions of statements that write the schema (or its statistics) and leave `changes`
    /// as it was, although they insert, update or delete rows of the schema table.
    private static let schemaActions: [AuthorizerAction] = [
        .createIndex, .createTable, .createTrigger, .createView, .dropIndex, .dropTable, .dropTrigger, .dropView,
        .alterTable, .createVirtualTable, .dropVirtualTable, .analyze, .reindex,
    ]

    /// Splits a script (only without arguments: arguments belong to one statement).
    private func statements(_ sql: String, arguments: StatementArguments) throws(FerryError) -> [String] {
        guard arguments.isEmpty else { return [sql] }
        let slices = SQLScript.statements(sql)
        return slices.isEmpty ? [] : slices
    }

    /// Plans `sql` (unless `planned` is its plan already), runs its preparation, and returns the
    /// final statement bound to `arguments`: from the connection's cache, or (`owned`, for a
    /// cursor) prepared for the caller alone.
    func prepareRedirected(_ sql: String, arguments: StatementArguments, owned: Bool = false,
                           planned: StatementPlan? = nil) throws(FerryError) -> (FerrySQLite.Statement, StatementPlan) {
        // `read { }` and `write { }` run their body in one transaction. After an I/O error, disk
        // full or an interrupt SQLite may roll the whole transaction back by itself: a statement
        // that ran after the app caught that error would run in autocommit mode and commit on its
        // own, although the write as a whole then fails (or, for a read, see another snapshot).
        guard connection.isInTransaction else {
            throw .sqlite(code: .abortRollback,
                          message: "the transaction of this \(isWriter ? "write" : "read") { } was rolled back after an earlier error in it; nothing more can run in it (rethrow that error)",
                          sql: sql)
        }
        var plan: StatementPlan
        if let planned { plan = planned } else { plan = try redirector.plan(sql) }
        if owned, plan.preparation != nil { throw Self.cursorRefusal(sql) }
        if !unavailableSources.isEmpty { try refuseIfSourceUnavailable(plan) }
        // The finished database would refuse it (an ambiguous rowid over a join): so does Ferry.
        if let check = plan.finishedShapeCheck { _ = try sqlite(connection.cachedStatement(check)) }
        tookKeyShortcut = false
        if let shortcut = plan.keyShortcut, shortcut.applies(arguments, floors: cursorFloors) {
            // The key moved: no pending row can take part (see `KeyShortcut`).
            plan.preparation = nil
            plan.statement = shortcut.statement
            tookKeyShortcut = true
        }
        if let preparation = plan.preparation {
            guard isWriter else {
                throw .misuse("a write statement on a migrating table runs in write { }, not read { }")
            }
            try connection.invisibly { () throws(FerryError) in try run(preparation, arguments: arguments) }
        }
        let statement = try sqlite(owned ? connection.prepare(plan.statement.sql) : connection.cachedStatement(plan.statement))
        if refusesWrites, !statement.isReadOnly {
            throw .sqlite(code: .readonly, message: "attempt to write a readonly database: read { } runs on the writer here (single-connection mode) and writes nothing; write in write { }", sql: sql)
        }
        try sqlite(statement.bind(arguments))
        return (statement, plan)
    }

    /// Throws the `sourceUnavailable` error of a missing source when the plan reads or moves the
    /// pending rows of a migrating table it feeds (named in the statement, or read through a view).
    private func refuseIfSourceUnavailable(_ plan: StatementPlan) throws(FerryError) {
        for name in plan.migratingTables.sorted() {
            guard let table = redirector.tables[name], let error = unavailableSources[table.mapping.source.schema] else { continue }
            throw error
        }
    }

    /// Runs a statement's preparation (Ferry's statements, trusted).
    private func run(_ preparation: Preparation, arguments: StatementArguments) throws(FerryError) {
        switch preparation {
        case .moveRows(let moves):
            try moves.run(on: connection, arguments: arguments)
        case .dropRedirectTriggers(let statements):
            try connection.withStatementTrust(.trusted) { () throws(FerryError) in
                for statement in statements { try sqlite(connection.executeCached(statement)) }
            }
        case .endMigration(let table, let statements):
            try connection.withStatementTrust(.trusted) { () throws(FerryError) in
                for statement in statements { try sqlite(connection.executeCached(statement)) }
            }
            appChanges?.engineStateChanged.withLock { $0 = true }
            redirector = redirector.removing(table)
            endedTables.insert(table)
        }
    }
}

extension FerrySQLite.Statement {
    /// Binds the arguments of the app's statement to a statement derived from it, which may use
    /// only some of its parameters (numbered as in the original).
    func bindAllowingUnused(_ arguments: StatementArguments) throws(FerryError) {
        reset()
        let count = parameterCount
        guard count > 0 else { return }
        switch arguments {
        case .positional(let values):
            for index in 1...count {
                guard index <= values.count else {
                    throw .invalidArguments("expected at least \(index) argument(s), got \(values.count)")
                }
                try sqlite(bind(values[index - 1], at: Int32(index)))
            }
        case .named:
            for index in 1...count {
                guard let fullName = parameterName(at: index) else {
                    throw .invalidArguments("parameter \(index) has no name; use positional arguments")
                }
                guard let value = arguments.value(at: index, named: fullName) else {
                    throw .invalidArguments("missing value for parameter \(fullName)")
                }
                try sqlite(bind(value, at: Int32(index)))
            }
        }
    }
}

/// Splits a script into statements with the SQL front end (strings, comments and trigger bodies
/// are respected), as `sqlite3_complete` would.
public enum SQLScript {
    /// The statements of `sql`, in order (a text that does not tokenize is returned whole, so
    /// that SQLite reports its error).
    public static func statements(_ sql: String) -> [String] {
        guard let tokens = try? Tokenizer.tokenize(SourceText(sql)) else { return [sql] }
        let source = SourceText(sql)
        return ScriptSplitter.split(tokens: tokens).map { source.string($0.range) }
    }
}

/// The writer's `changes` as the app's own statements left it.
final class ChangesCounter: Sendable {
    let value = Mutex(0)
    /// Set when a statement changed what the engine loads from the database (it ended a table's
    /// migration, or added a column to one): reload the engine's state after the transaction.
    let engineStateChanged = Mutex(false)
}
