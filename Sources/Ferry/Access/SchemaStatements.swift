import FerrySQL
import FerrySQLite

/// Schema statements and pragmas on a migrating table that behave as on the finished table.
///
/// The target table already has the finished table's shape (its columns, constraints and indexes
/// are those the app declared); the pending source rows are the only part of the finished table it
/// lacks. So:
/// - `PRAGMA table_info / table_xinfo / index_list / foreign_key_list (T)`, `ANALYZE T`
///   and `REINDEX T` describe or maintain the target, and run as written; `PRAGMA table_list(T)`
///   lists every schema's `T` except Ferry's attached sources (`index_info` and
///   `index_xinfo` name an index, not `T`, and never reach here).
/// - `CREATE INDEX ... ON T` runs on the target: the pending rows join the index as they move.
/// - `ALTER TABLE T ADD COLUMN c` runs on the target: the pending rows read `c`'s default through
///   the union and get it when they move (a source column named `c` never feeds it).
/// - `ALTER TABLE T DROP COLUMN c` runs on the target: the pending rows stop showing `c` (the
///   redirect triggers, which name every column, are dropped first and built again after).
/// - `ALTER TABLE T RENAME TO U` runs on the target, and Ferry's state follows (the plan still
///   naming `T` finds `U`).
/// - `ALTER TABLE T RENAME COLUMN a TO z` runs on the target: `z` keeps `a`'s feed (recorded as a
///   `ColumnChanges` rename), so the pending rows read and move their value under the new name.
/// - `CREATE UNIQUE INDEX ... ON T` must also see the pending rows, which may duplicate a key:
///   first every pending source row whose key is shared with another row of the finished table
///   moves into the target (a move is always allowed), then the index is created there, and
///   fails exactly as SQLite fails on the finished table (`UNIQUE constraint failed`) when a key
///   is duplicated. The redirect triggers then learn the new key (`SchemaEffect.uniqueKeysChanged`), so that the
///   app's later inserts conflict with pending rows as with moved ones.
extension StatementRedirector {
    /// The pragmas that check a table by its name (`integrity_check(T)`, `quick_check(T)`).
    static let checkingPragmas: Set<String> = ["integrity_check", "quick_check"]

    /// The pragmas that describe a table by its name.
    static let describingPragmas: Set<String> = ["table_info", "table_xinfo", "index_list", "foreign_key_list"]

    /// The plan of a schema statement or pragma naming migrating targets alone,
    /// or nil when it must be refused.
    func schemaPlan(_ request: OtherStatementRequest) throws(RewriteError) -> StatementPlan? {
        if let plan = viewPlan(request) { return plan }
        if case .createTrigger(let trigger) = request.statement { return try triggerPlan(trigger, request) }
        if let plan = foreignKeyPlan(request) { return plan }
        let named = request.tables.subtracting(shadowedSourceTables)
        guard !named.isEmpty, named.allSatisfy({ tables[$0] != nil }) else { return nil }
        switch request.statement {
        case .pragma(let pragma) where Self.describingPragmas.contains(pragma.name.name.name.lowercased()):
            return .asWritten(request)
        case .pragma(let pragma) where pragma.name.name.name.lowercased() == "table_list" && named.count == 1:
            // Every schema's table of that name: not Ferry's attached sources, which the finished
            // database does not have (`main.table_list(T)` lists main's alone, as written).
            if pragma.name.schema != nil { return .asWritten(request) }
            return .instead("SELECT * FROM pragma_table_list(\(sqlString(named.first!))) WHERE schema NOT LIKE 'ferry\\_%' ESCAPE '\\'")
        case .pragma(let pragma) where Self.checkingPragmas.contains(pragma.name.name.name.lowercased()) && named.count == 1:
            // The finished table's rows are the target's and the pending source rows: both tables
            // (and their indexes) are checked, and the answer is SQLite's `ok` when both are.
            guard let table = tables[named.first!] else { return nil }
            let check = pragma.name.name.name.lowercased()
            let mapping = table.mapping
            return .instead("""
                WITH ferry_check(m) AS (SELECT * FROM pragma_\(check)(\(sqlString(mapping.target.name)), 'main') \
                UNION ALL SELECT * FROM pragma_\(check)(\(sqlString(mapping.sourceShape.name)), \(sqlString(mapping.source.schema)))) \
                SELECT m AS \(q(check)) FROM ferry_check WHERE m <> 'ok' \
                UNION ALL SELECT 'ok' WHERE NOT EXISTS (SELECT 1 FROM ferry_check WHERE m <> 'ok')
                """)
        case .analyze, .reindex:
            return .asWritten(request)
        case .alterTable(let alter):
            guard let table = tables[alter.table.name.name.lowercased()] else { return nil }
            switch alter.action {
            case .addColumn(let column):
                // The target gains the column; the pending rows read its default in the union (no
                // source column feeds it, whatever its name), and get it when they move. A
                // REFERENCES clause brings foreign-key moves: the redirect triggers are built again.
                return .asWritten(request, effects: [.columnAdded(table: table.mapping.targetName, column: column.name.name),
                                                     .uniqueKeysChanged, .schemaChanged])
            case .renameColumn(let old, let new):
                // The target's column is renamed (SQLite rewrites its indexes, views and triggers);
                // it keeps its feed, which the pending rows read under the new name.
                guard let column = table.mapping.target.column(named: old.name) else { return .asWritten(request) }  // SQLite's error
                // The app's guarded triggers were rewritten by SQLite; the redirect triggers are
                // built again from the renamed key columns rather than left to SQLite's rewrite.
                return .asWritten(request, effects: [.columnRenamed(table: table.mapping.targetName, old: column.name, new: new.name),
                                                     .triggersChanged, .uniqueKeysChanged, .schemaChanged])
            case .dropColumn(let name):
                // The target loses the column (SQLite refuses, as on the finished table, a column
                // an index, constraint, view or trigger uses); the pending rows stop showing it.
                // The redirect triggers name every column, and SQLite checks temp triggers too:
                // they are dropped first and built again after (also when the DROP fails).
                guard table.mapping.target.column(named: name.name) != nil else { return .asWritten(request) }  // SQLite's error
                var plan = StatementPlan.asWritten(request, effects: [.columnDropped, .uniqueKeysChanged, .schemaChanged])
                plan.preparation = .dropRedirectTriggers(table.triggerNames.map { HashedSQL("DROP TRIGGER IF EXISTS temp.\(q($0))") })
                return plan
            case .renameTable(let new):
                // The target is renamed (SQLite rewrites its indexes, views and triggers); Ferry's
                // state follows, and the redirect triggers are built again under the new name.
                if AccessPolicy.isReservedObject(new.name) {
                    throw RewriteError.refused(table: table.mapping.targetName, reason: "\(new.name) is a name Ferry reserves")
                }
                return .asWritten(request, effects: [.tableRenamed(old: table.mapping.targetName, new: new.name),
                                                     .triggersChanged, .uniqueKeysChanged, .schemaChanged])
            }
        case .createIndex(let index):
            guard index.unique, let table = tables[index.table.name.lowercased()] else { return .asWritten(request) }
            // The rows' rowid under a spelling no real column shadows (a column named `rowid` is the app's).
            guard let rowid = table.mapping.target.unshadowedRowidSpellings.first else {
                throw RewriteError.refused(table: table.mapping.targetName, reason: "its columns are named rowid, oid and _rowid_, so Ferry cannot "
                                           + "name the rows a unique index would find duplicated; create the index once the migration finished")
            }
            let duplicates = try redirectReads(Self.duplicateKeySelection(of: index, table: table.mapping.targetName, rowid: rowid),
                                               alsoExposing: [rowid])
            var plan = StatementPlan.asWritten(request, effects: [.uniqueKeysChanged])
            plan.preparation = .moveRows(RowMovePlan.aheadOfUniqueIndex(on: table, duplicateKeys: duplicates))
            return plan
        default:
            return nil
        }
    }

    /// `CREATE VIEW` reading migrating tables (stored as written: Ferry expands the view on every
    /// read, see `DependentView`), and `DROP VIEW` of such a view. Temporary views stay refused:
    /// they live on one connection, where SQLite would expand them out of the rewriter's reach.
    private func viewPlan(_ request: OtherStatementRequest) -> StatementPlan? {
        switch request.statement {
        case .createView(let view) where !view.temporary && (view.name.schema == nil || view.name.schema?.name.lowercased() == "main"):
            // The view's own name may be listed (a view of that name was dropped in this transaction).
            let read = request.tables.subtracting([view.name.name.name.lowercased()])
            guard read.allSatisfy({ tables[$0] != nil || views[$0] != nil || unreadableViews.contains($0) || shadowedSourceTables.contains($0) })
            else { return nil }
        case .drop(let drop) where drop.kind == .view:
            guard request.tables.allSatisfy({ views[$0] != nil || unreadableViews.contains($0) }) else { return nil }
        default:
            return nil
        }
        return .asWritten(request, effects: [.schemaChanged])
    }

    /// A table of the app's created with a foreign key to a migrating table (a table's columns can
    /// name another table only there), or a column with one added to a table of the app's: created
    /// as written; the redirect triggers are installed again, with the foreign-key moves of the new
    /// key (`ForeignKeyEdge`).
    private func foreignKeyPlan(_ request: OtherStatementRequest) -> StatementPlan? {
        switch request.statement {
        case .createTable(let create):
            guard case .columns = create.definition, !create.temporary,
                  create.name.schema == nil || create.name.schema?.name.lowercased() == "main",
                  tables[create.name.name.name.lowercased()] == nil
            else { return nil }
        case .alterTable(let alter):
            guard case .addColumn = alter.action, tables[alter.table.name.name.lowercased()] == nil,
                  alter.table.schema == nil || alter.table.schema?.name.lowercased() == "main"
            else { return nil }
        default:
            return nil
        }
        return .asWritten(request, effects: [.uniqueKeysChanged])
    }

    /// `CREATE TRIGGER` on a migrating table, or whose body names one: created as written; once
    /// it ran, an INSERT trigger on `T` is stored guarded so that it fires for the app's inserts
    /// alone, never for the rows Ferry moves (`AppTriggerGuard`), and the body's statements that
    /// update, delete or read a migrating table get Ferry's calls (`AppTriggerWrites`), both
    /// through `SchemaEffect.triggersChanged`. What the calls cannot cover runs inside SQLite, out
    /// of the rewriter's reach, and would see the moved rows alone: it is refused (a read beside
    /// `RAISE` in another shape than `SELECT RAISE(...) ... WHERE ...`, a source or a view Ferry
    /// cannot read). A `WHEN` that reads one is evaluated by Ferry's call.
    private func triggerPlan(_ trigger: CreateTriggerStatement, _ request: OtherStatementRequest) throws(RewriteError) -> StatementPlan? {
        let readable = Set(tables.keys).union(views.keys)
        let listed = readable.union(unreadableViews).union(protectedSources)
        func named(_ analysis: StatementAnalysis) -> [String] {
            analysis.tables.filter { $0.context != .schemaObject && $0.resolution == .table }.map { $0.name.name.name.lowercased() }
                .filter(listed.contains)
        }
        let refusal = { (table: String, what: String) in
            RewriteError.refused(table: table, reason: "\(what) runs inside SQLite, where \(table) (migrating) would show only the rows "
                                 + "already moved; create the trigger once the migration finished")
        }
        var inBody: [String] = []
        for statement in trigger.body {
            let names = named(StatementAnalysis(statement))
            inBody += names
            if let other = names.first(where: { !readable.contains($0) }) { throw refusal(other, "a trigger's body") }
        }
        let isRead = { (relation: String, schema: String?) in (schema == nil || schema == "main") && readable.contains(relation) }
        if let index = ((try? TriggerWriteMoves.readsLeftToSQLite(request.originalSQL, isRead: isRead)) ?? []).first,
           let first = named(StatementAnalysis(trigger.body[index])).first {
            throw refusal(first, "a trigger's body with RAISE (other than SELECT RAISE(...) ... WHERE ...)")
        }
        // What the whole statement names beyond its body is in its WHEN (evaluated by Ferry's call).
        let inStatement = named(request.analysis)
        let inWhen = inStatement.filter { name in inStatement.filter { $0 == name }.count > inBody.filter { $0 == name }.count }
        if let other = inWhen.first(where: { !readable.contains($0) }) { throw refusal(other, "a trigger's WHEN") }
        guard tables[trigger.table.name.name.lowercased()] != nil || !inBody.isEmpty || !inWhen.isEmpty else { return nil }
        return .asWritten(request, effects: [.triggersChanged])
    }

    /// The rowids of the rows of `table` (read as the finished table) whose key in the unique
    /// `index` is shared with another row: NULL in any key column never conflicts; the partial
    /// index's condition applies; each key expression keeps its collation.
    /// - Parameter rowid: the spelling of the rowid to read (one no real column shadows).
    static func duplicateKeySelection(of index: CreateIndexStatement, table: String, rowid: String = "rowid") -> String {
        let printer = Printer()
        let keys = index.columns.map { printer.print($0.expression) }
        var conditions = keys.map { "(\($0)) IS NOT NULL" }
        if let condition = index.where { conditions.append("(\(printer.print(condition)))") }
        return "SELECT r FROM (SELECT \(rowid) AS r, count(*) OVER (PARTITION BY \(keys.joined(separator: ", "))) AS n "
            + "FROM \(q(table)) WHERE \(conditions.joined(separator: " AND "))) WHERE n > 1"
    }
}

extension StatementPlan {
    /// A schema statement of the app's that runs as written, then has `effects`.
    static func asWritten(_ request: OtherStatementRequest, effects: [SchemaEffect] = []) -> StatementPlan {
        StatementPlan(preparation: nil, statement: HashedSQL(request.originalSQL), isUnchanged: false, effects: effects)
    }

    /// A statement of Ferry's that answers the app's instead (a pragma over the finished table).
    static func instead(_ sql: String) -> StatementPlan {
        StatementPlan(preparation: nil, statement: HashedSQL(sql), isUnchanged: false)
    }
}
