import FerrySQL
import FerrySQLite
import Synchronization

/// What to run for one statement of the app while tables migrate.
struct RedirectedStatement: Sendable {
    /// Statements that move the source rows the app's statement may touch into the target, run
    /// first (with the redirect triggers suspended). Parameters keep the app's numbering.
    /// Hashed once, with the rewrite: they are long, and run again at every use.
    var moves: [HashedSQL]
    /// The app's statement with every read of a migrating table replaced by its union.
    var statement: HashedSQL
    /// True when the statement names no migrating table and runs as written.
    var isUnchanged: Bool
    /// The migrating table whose migration the statement ended (DROP TABLE of a migrating
    /// target): the rest of the transaction treats it as a plain table, and the engine reloads its
    /// state from the catalog after the transaction.
    var endedTable: String?
    /// True when the statement ended a table's migration.
    var endsMigration: Bool { endedTable != nil }
    /// The statement changes a migrating table's unique keys (`CREATE UNIQUE INDEX`): once it ran,
    /// the redirect triggers must be rebuilt (see `SchemaStatements`).
    var changesUniqueKeys = false
    /// The statement changes what the redirector knows of main's schema (a view reading a
    /// migrating table created or dropped, a column added to one): once it ran, the redirector is
    /// built again from the transaction's view of the schema.
    var changesSchema = false
    /// The column the statement adds to a migrating table (`ALTER TABLE T ADD COLUMN c`): recorded
    /// with it, so that no source column ever feeds it (see `ColumnChanges`).
    var addedColumn: (table: String, column: String)?
    /// The column the statement renames in a migrating table (`ALTER TABLE T RENAME COLUMN a TO
    /// z`): recorded with it, so that `z` keeps `a`'s feed (see `ColumnChanges`).
    var renamedColumn: (table: String, old: String, new: String)?
    /// The migrating table the statement renames (`ALTER TABLE T RENAME TO U`): Ferry's state
    /// follows the new name in the same transaction (`MigrationState.recordRenamedTable`).
    var renamedTable: (old: String, new: String)?
    /// The statement drops a column of a migrating table (`ALTER TABLE T DROP COLUMN c`): its
    /// moves drop the redirect triggers, which are built again after it, whether it succeeds or not.
    var droppedColumn = false
    /// The statement creates a trigger on a migrating table: once it ran, the app's INSERT
    /// triggers there are stored guarded (see `AppTriggerGuard`).
    var changesTriggers = false
    /// A cheaper statement to run when the key the statement pins has moved (see `KeyShortcut`).
    var keyShortcut: KeyShortcut?
}

/// Turns the app's SQL into SQL that behaves on migrating tables exactly as on finished ones.
///
/// - Reads of a migrating target `T` become `(target rows UNION ALL pending source rows)`.
/// - `UPDATE`/`DELETE` of `T` first move the pending source rows their `WHERE` (and `FROM`) can
///   select into `T` ("move-then-write"); then the statement runs on `T` alone, so `changes()`,
///   `RETURNING`, `ORDER BY ... LIMIT`, triggers and conflicts are those of a finished table.
/// - `INSERT` (including UPSERT and `REPLACE`) runs on `T`; the redirect triggers move any
///   pending source row it conflicts with just before each row is written.
/// - Schema statements naming a migrating target, and writes to a source table that feeds one,
///   are refused with `FerryError.unsupportedDuringMigration`: nothing bypasses the rewrite.
///
/// A class (immutable): every `read { }` and `write { }` hands the cached one to its connection,
/// and copying a struct of this many collections cost more than the statement's own lookup.
final class StatementRedirector: Sendable {
    /// The migrating targets by lower-cased name.
    let tables: [String: MigratingTableSQL]
    /// Source tables in the target file (same-file migrations), lower-cased: read-only while migrating.
    let protectedSources: Set<String>
    /// Views reading a migrating table, lower-cased: expanded by the redirector (see `DependentView`).
    let views: [String: DependentView]
    /// Views that mention a migrating table but that the front end cannot parse: reads refused.
    let unreadableViews: Set<String>
    /// Source tables attached from other files (lower-cased) that no migrating target is named
    /// after: an unqualified name never falls through to them (SQLite would look a name main lacks
    /// up in attached schemas), so their reads are qualified with `main`.
    let shadowedSourceTables: Set<String>
    /// Finished targets whose moved rows are still in their source (lower-cased): cleanup finds
    /// them by name, so renaming one is recorded like renaming a migrating table.
    let awaitingCleanup: Set<String>
    /// Every foreign key of main's tables, when tables migrate (for `PRAGMA foreign_key_check`).
    let foreignKeys: [ForeignKeyEdge]
    private let tableSet: TableSet
    /// Rewrites already made for this set of migrating tables, by SQL text.
    private let cache = RedirectCache()

    init(tables: [MigratingTableSQL], views: [DependentView] = [], unreadableViews: Set<String> = [],
         attachedSourceTables: Set<String> = [], awaitingCleanup: Set<String> = [], foreignKeys: [ForeignKeyEdge] = []) {
        var byName: [String: MigratingTableSQL] = [:]
        var protected = Set<String>()
        for table in tables {
            byName[table.mapping.targetName.lowercased()] = table
            if table.mapping.source.path == nil { protected.insert(table.mapping.sourceShape.name.lowercased()) }
        }
        self.tables = byName
        self.protectedSources = protected.subtracting(byName.keys)
        self.views = Dictionary(views.map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        self.unreadableViews = unreadableViews
        self.shadowedSourceTables = attachedSourceTables.subtracting(byName.keys).subtracting(protected).subtracting(self.views.keys)
            .subtracting(unreadableViews)
        self.awaitingCleanup = awaitingCleanup.subtracting(byName.keys)
        self.foreignKeys = foreignKeys
        self.tableSet = TableSet((Array(byName.keys) + Array(protectedSources) + Array(self.views.keys) + Array(unreadableViews)
            + Array(shadowedSourceTables) + Array(self.awaitingCleanup)).map { "main.\($0)" })
    }

    /// The same redirector without `table` (lower-cased), for the rest of a transaction that ended
    /// its migration.
    func removing(_ table: String) -> StatementRedirector {
        let ended = tables[table].flatMap { $0.mapping.source.path == nil ? nil : $0.mapping.sourceShape.name.lowercased() }
        return StatementRedirector(tables: tables.filter { $0.key != table }.map(\.value), views: Array(views.values),
                                   unreadableViews: unreadableViews, attachedSourceTables: shadowedSourceTables.union(ended.map { [$0] } ?? []),
                                   awaitingCleanup: awaitingCleanup, foreignKeys: foreignKeys)
    }

    /// The relations whose reads or writes the redirector handles, lower-cased: migrating targets
    /// and same-file sources (views are found from these).
    static func migratingRelations(_ tables: [MigratingTableSQL]) -> Set<String> {
        Set(tables.flatMap { table in
            [table.mapping.targetName.lowercased()] + (table.mapping.source.path == nil ? [table.mapping.sourceShape.name.lowercased()] : [])
        })
    }

    /// True when no table migrates: every statement passes through.
    var isEmpty: Bool { tables.isEmpty && protectedSources.isEmpty && shadowedSourceTables.isEmpty && awaitingCleanup.isEmpty }

    /// Rewrites one statement.
    /// - Throws: `FerryError.unsupported` / `.unsupportedDuringMigration` for statements that
    ///   cannot be made to behave like the finished table, with the reason.
    func redirect(_ sql: String) throws(FerryError) -> RedirectedStatement {
        if isEmpty { return RedirectedStatement(moves: [], statement: HashedSQL(sql), isUnchanged: true) }
        if let cached = cache.lookup(sql) { return cached }
        let redirected = try redirectUncached(sql)
        cache.store(redirected, for: sql)
        return redirected
    }

    /// Rewrites one statement without looking in the cache or storing in it.
    func redirectUncached(_ sql: String) throws(FerryError) -> RedirectedStatement {
        // A text that does not tokenize goes on to the rewriter, which reports the syntax error.
        let tokens = (try? Tokenizer.tokenize(sql)) ?? []
        if let drop = try dropOfMigratingTable(sql, tokens: tokens) { return drop }
        if let check = try foreignKeyCheck(sql, tokens: tokens) { return check }
        let rowidNames = RowidUsage.names(in: tokens, source: SourceText(sql))
        let facts = RedirectFacts()
        do throws(RewriteError) {
            let result = try Rewriter(policy: policy(rowidNames: rowidNames, facts: facts)).rewrite(sql)
            var redirected = RedirectedStatement(moves: result.statements.dropLast().map(HashedSQL.init), statement: HashedSQL(result.statements.last ?? sql),
                                                 isUnchanged: result.isUnchanged)
            redirected.changesUniqueKeys = facts.changedUniqueKeys.withLock { $0 }
            redirected.changesSchema = facts.changedSchema.withLock { $0 }
            redirected.addedColumn = facts.addedColumn.withLock { $0 }
            redirected.changesTriggers = facts.changedTriggers.withLock { $0 }
            redirected.renamedColumn = facts.renamedColumn.withLock { $0 }
            redirected.renamedTable = facts.renamedTable.withLock { $0 }
            redirected.droppedColumn = facts.droppedColumn.withLock { $0 }
            if !result.isUnchanged { redirected.keyShortcut = try keyShortcut(sql, result: result, redirected: redirected, rowidNames: rowidNames) }
            return redirected
        } catch {
            throw ferryError(error, sql: sql)
        }
    }

    /// The shortcut of a point statement on a migrating table (see `KeyShortcut`): a SELECT whose
    /// `WHERE` pins the table's rowid reads the target alone (its other reads as `result` has them);
    /// an UPDATE or DELETE so pinned runs without its moves. Nil for other statements, and for
    /// tables whose rowids do not follow their source's order.
    private func keyShortcut(_ sql: String, result: RewriteResult, redirected: RedirectedStatement,
                             rowidNames: [String]) throws(RewriteError) -> KeyShortcut? {
        let candidates = result.writes.isEmpty ? result.reads : result.writes
        guard candidates.contains(where: { tables[$0].map(KeyShortcut.applies(to:)) ?? false }),
              let statement = try? Parser.parseStatement(sql)
        else { return nil }
        let analysis = StatementAnalysis(statement)
        for name in candidates.sorted() {
            guard let table = tables[name], KeyShortcut.applies(to: table),
                  let key = PinnedKey.find(in: statement, analysis: analysis, table: name, tables: tableSet,
                                           keyColumns: KeyShortcut.keyColumns(of: table.mapping))
            else { continue }
            if result.writes.isEmpty {
                let targetOnly = try Rewriter(policy: policy(rowidNames: rowidNames, readingTargetOnly: name)).rewrite(sql)
                return KeyShortcut(table: table.mapping.registeredName, key: key, statement: HashedSQL(targetOnly.statements.last ?? sql))
            }
            return KeyShortcut(table: table.mapping.registeredName, key: key, statement: redirected.statement)
        }
        return nil
    }

    /// How the rewriter serves a statement that spells the rowid as `rowidNames`: reads of a
    /// migrating table become its union, writes move the rows they may touch first.
    /// - Parameter targetOnly: a migrating table read from its target alone (a `KeyShortcut`).
    private func policy(rowidNames: [String], facts: RedirectFacts = RedirectFacts(), readingTargetOnly targetOnly: String? = nil) -> RewritePolicy {
        var policy = RewritePolicy(tables: tableSet, replacementForRead: { [self] name throws(RewriteError) in
            try replacement(forRead: name, hint: nil, rowidNames: rowidNames, targetOnly: targetOnly)
        }, rewriteWrite: { [self] request throws(RewriteError) in
            if protectedSources.contains(request.table) {
                throw RewriteError.refused(table: request.table, reason: "it is the source of a migration in progress and is read-only until the migration finishes")
            }
            if views[request.table] != nil || unreadableViews.contains(request.table) {
                throw RewriteError.refused(table: request.table, reason: "view \(request.table) reads a migrating table; writes through it (INSTEAD OF triggers) must wait until the migration finishes")
            }
            guard let table = tables[request.table] else { return [.sql(request.sqlWithReadsRewritten)] }
            var statements: [RewrittenStatement] = []
            if let selection = try Self.affectedRowSelection(request, table: table) {
                statements = try table.moveStatements(selection: redirectReads(selection, pendingRowsOf: table), pendingOnly: true).map { .sql($0) }
            }
            return statements + [.sql(request.sqlWithReadsRewritten)]
        }, rewriteOther: { [self] request throws(RewriteError) in
            // Only names of attached sources (a table the app may create in main, e.g. after dropping
            // or renaming its migrating table): main's, as on the finished table.
            if request.tables.isSubset(of: shadowedSourceTables.union(awaitingCleanup)) {
                if case .alterTable(let alter) = request.statement, case .renameTable(let new) = alter.action,
                   awaitingCleanup.contains(alter.table.name.name.lowercased()) {
                    // Cleanup finds the finished table by name: Ferry's state follows the rename.
                    facts.renamedTable.withLock { $0 = (alter.table.name.name, new.name) }
                }
                let inMain = request.tables.isSubset(of: shadowedSourceTables) ? Self.inMain(request.statement) : nil
                return [inMain.map { .statement($0) } ?? .sql(request.originalSQL)]
            }
            if let statements = try schemaStatements(request, facts: facts) { return statements }
            throw RewriteError.refused(table: request.tables.sorted().joined(separator: ", "),
                          reason: "this schema change or pragma on a migrating table must wait until its migration finishes (see Limitations)")
        })
        policy.replacementForHintedRead = { [self] name, hint throws(RewriteError) in
            try replacement(forRead: name, hint: hint, rowidNames: rowidNames, targetOnly: targetOnly)
        }
        // A write of an attached source's name goes to main's table of that name or fails as "no
        // such table", as on the finished table (SQLite would look the name up in the source).
        policy.qualifiedWriteTarget = { [shadowedSourceTables] name in
            shadowedSourceTables.contains(name) ? QualifiedName(schema: Identifier("main"), Identifier(name)) : nil
        }
        policy.starColumns = starColumns(rowidNames: rowidNames, except: targetOnly)
        policy.aggregateArms = { [tables] name throws(RewriteError) in
            name == targetOnly ? nil : try tables[name]?.aggregateArms(exposingRowidAs: rowidNames)
        }
        policy.rowidResultName = { [self] name in
            // SQLite names a result column reading the rowid after the INTEGER PRIMARY KEY column, if any.
            guard let table = tables[name] else { return nil }
            return table.mapping.target.rowidAliasColumn ?? "rowid"
        }
        return policy
    }

    /// A schema statement or pragma whose object is unqualified, qualified with `main` (SQLite
    /// would otherwise look a name main lacks up in the attached sources); nil when it names its
    /// schema or is of another kind.
    static func inMain(_ statement: FerrySQL.Statement) -> FerrySQL.Statement? {
        let main = Identifier("main")
        switch statement {
        case .alterTable(var alter) where alter.table.schema == nil:
            alter.table.schema = main
            return .alterTable(alter)
        case .drop(var drop) where drop.name.schema == nil:
            drop.name.schema = main
            return .drop(drop)
        case .createIndex(var index) where index.name.schema == nil:
            index.name.schema = main
            return .createIndex(index)
        case .pragma(var pragma) where pragma.name.schema == nil:
            pragma.name.schema = main
            return .pragma(pragma)
        default:
            return nil
        }
    }

    /// `DROP TABLE T` of a migrating target: as on the finished table, every row of `T` goes,
    /// including the source rows not moved yet. `T` is dropped and its migration marked finished
    /// with the cursor above every source row, in the target file alone; the cleanup steps then
    /// delete those source rows (rows outside the filter stay).
    private func dropOfMigratingTable(_ sql: String, tokens: [Token]) throws(FerryError) -> RedirectedStatement? {
        guard tokens.first?.keyword == .drop,
              case .drop(let drop)? = try? Parser.parseStatement(sql), drop.kind == .table,
              let table = tables[drop.name.name.name.lowercased()],
              drop.name.schema == nil || drop.name.schema?.name.lowercased() == "main"
        else { return nil }
        return RedirectedStatement(moves: table.dropStatements.map(HashedSQL.init), statement: HashedSQL("PRAGMA temp.user_version = 0"), isUnchanged: false,
                                   endedTable: table.mapping.targetName.lowercased())  // a no-op without result columns
    }

    /// `PRAGMA foreign_key_check` (of every table, or of one) when a foreign key involves a
    /// migrating table: SQLite would check the moved rows alone, against moved parents alone. It
    /// becomes a query with the pragma's columns over the finished tables (each migrating one read
    /// as its union): a child row whose key columns are all non-NULL and match no parent row,
    /// ordered by table, rowid and key.
    private func foreignKeyCheck(_ sql: String, tokens: [Token]) throws(FerryError) -> RedirectedStatement? {
        guard tokens.first?.keyword == .pragma,
              case .pragma(let pragma)? = try? Parser.parseStatement(sql), pragma.name.name.name.lowercased() == "foreign_key_check",
              pragma.name.schema == nil || pragma.name.schema?.name.lowercased() == "main"
        else { return nil }
        let only = pragma.value.map { SQLName.unquoted($0).lowercased() }
        let edges = foreignKeys.filter { only == nil || $0.child.lowercased() == only }
        guard edges.contains(where: { tables[$0.child.lowercased()] != nil || tables[$0.parent.lowercased()] != nil }) else {
            // No key involves a migrating table: SQLite's own answer is the finished tables'.
            return RedirectedStatement(moves: [], statement: HashedSQL(sql), isUnchanged: true)
        }
        let arms = edges.map { edge -> String in
            let bound = edge.childColumns.map { "c.\(q($0)) IS NOT NULL" }
            let match = zip(edge.parentColumns, edge.childColumns).map { "p.\(q($0)) = c.\(q($1))" }
            return "SELECT \(sqlString(edge.child)) AS \"table\", \(edge.childHasRowid ? "c.rowid" : "NULL") AS rowid, "
                + "\(sqlString(edge.parent)) AS parent, \(edge.id) AS fkid FROM \(q(edge.child)) AS c "
                + "WHERE \(bound.joined(separator: " AND ")) AND NOT EXISTS (SELECT 1 FROM \(q(edge.parent)) AS p WHERE \(match.joined(separator: " AND ")))"
        }
        let query = "SELECT * FROM (\(arms.joined(separator: " UNION ALL "))) ORDER BY 1, 2, 4"
        do throws(RewriteError) {
            return RedirectedStatement(moves: [], statement: HashedSQL(try redirectReads(query, forFerry: false)), isUnchanged: false)
        } catch {
            throw ferryError(error, sql: sql)
        }
    }

    /// The body of a dependent view with its reads of migrating tables (and other views) rewritten.
    private func expandedBody(of view: DependentView) throws(RewriteError) -> String {
        let tokens = (try? Tokenizer.tokenize(view.body)) ?? []
        let rowidNames = RowidUsage.names(in: tokens, source: SourceText(view.body))
        let result = try Rewriter(policy: policy(rowidNames: rowidNames)).rewrite(view.body)
        return result.statements.last ?? view.body
    }

    /// Rewrites the reads of a helper query built by the redirector (exposing rowid, NULL for the
    /// rows of a target without one).
    /// - Parameter forFerry: false when the rowids the query reads are shown to the app (they
    ///   are then the finished table's, see `MigratingTableSQL.unionSelect`).
    /// - Parameter pendingRowsOf: the table whose pending rows `pendingRowsName` reads (the rows a
    ///   write may move: see `affectedRowSelection`).
    func redirectReads(_ sql: String, forFerry: Bool = true, pendingRowsOf pending: MigratingTableSQL? = nil) throws(RewriteError) -> String {
        let names = pending == nil ? tableSet : tableSet.adding("main.\(Self.pendingRowsName)")
        var policy = RewritePolicy(tables: names) { [self] name throws(RewriteError) in
            if let pending, name == Self.pendingRowsName { return .subquery(try pending.pendingSelect()) }
            return try replacement(forRead: name, hint: nil, rowidNames: ["rowid"], forFerry: forFerry)
        }
        policy.replacementForHintedRead = { [self] name, hint throws(RewriteError) in
            try replacement(forRead: name, hint: hint, rowidNames: ["rowid"], forFerry: forFerry)
        }
        policy.starColumns = starColumns(rowidNames: ["rowid"])
        return try Rewriter(policy: policy).rewrite(sql).statements[0]
    }

    /// The columns `*` shows on a migrating table, when its union also exposes the rowid (under
    /// `rowidNames`): `*` is then spelled out so that it shows the finished table's columns alone.
    private func starColumns(rowidNames: [String], except targetOnly: String? = nil) -> (@Sendable (String) -> [String]?)? {
        if rowidNames.isEmpty { return nil }
        return { [tables] name in name == targetOnly ? nil : tables[name]?.mapping.target.columns.map(\.name) }
    }

    /// What a read of the listed relation `name` becomes, exposing the rowid as `rowidNames`:
    /// - a migrating table: its union, with the app's `INDEXED BY` / `NOT INDEXED` on the target's
    ///   arm (its indexes are the finished table's);
    /// - a view reading one: the view expanded (SQLite refuses a hint on a view, on the finished
    ///   table too); a view Ferry cannot parse is refused;
    /// - a same-file source (read as is), or an attached source's name read unqualified: main's
    ///   table, as if no source were attached (a hint stays as written);
    /// - `targetOnly`, a migrating table: its target alone (a hint stays as written).
    private func replacement(forRead name: String, hint: IndexHint?, rowidNames: [String], forFerry: Bool = false,
                             targetOnly: String? = nil) throws(RewriteError) -> TableReplacement {
        if let table = tables[name] {
            if name == targetOnly { return .table(QualifiedName(schema: Identifier("main"), Identifier(table.mapping.target.name))) }
            return .subquery(try table.unionSelect(exposingRowidAs: rowidNames, hint: hint, forFerry: forFerry))
        }
        if hint != nil && (views[name] != nil || unreadableViews.contains(name)) {
            throw RewriteError.refused(table: name, reason: "a view cannot carry INDEXED BY / NOT INDEXED")
        }
        if let view = views[name] { return .subquery(view.expansion(rewrittenBody: try expandedBody(of: view))) }
        if unreadableViews.contains(name) {
            throw RewriteError.refused(table: name, reason: "view \(name) reads a migrating table, and Ferry cannot parse its definition to serve it; read it once the migration finished")
        }
        return .table(QualifiedName(schema: Identifier("main"), Identifier(name)))
    }

    /// The name `affectedRowSelection` reads the pending rows of its table under (replaced by
    /// `MigratingTableSQL.pendingSelect()`; an app table of that name read in the write's condition
    /// would read them too, which moves rows early at worst, as the stepper would).
    static let pendingRowsName = "ferry_pending_rows"

    /// `WITH ... SELECT alias.ferry_identity AS r FROM pending AS alias [, FROM items] WHERE ...` for UPDATE
    /// and DELETE: the identity of every pending row the statement may touch (a superset when it
    /// has ORDER BY / LIMIT, which then apply to the target alone, as in a finished table). Only
    /// pending rows can need a move, so the target's rows are not read. Nil for INSERT.
    static func affectedRowSelection(_ request: WriteRequest, table: MigratingTableSQL) throws(RewriteError) -> String? {
        let reference: TableReference
        let from: JoinClause?
        let condition: Expression?
        let with: WithClause?
        switch request.statement {
        case .update(let update):
            (reference, from, condition, with) = (update.table, update.from, update.where, update.with)
        case .delete(let delete):
            (reference, from, condition, with) = (delete.table, nil, delete.where, delete.with)
        default:
            return nil
        }
        let name = reference.alias ?? reference.name.name
        var joins: [Join] = []
        if let from { joins = [Join(JoinOperator(.comma), from.first)] + from.joins }
        // The statement's INDEXED BY / NOT INDEXED names the target's index: it applies when the
        // statement runs on the target, not to the source's pending rows.
        let target = TableReference(QualifiedName(schema: Identifier("main"), Identifier(pendingRowsName)), alias: name)
        let select = SelectStatement(with: with, first: .select(SelectClause(
            columns: [.expression(.column(ColumnReference(table: name, column: Identifier(MigratingTableSQL.identityColumn))), alias: Identifier("r"))],
            from: JoinClause(.table(target), joins: joins), where: condition)))
        return Printer(options: PrinterOptions(numberAnonymousParameters: true)).print(select)
    }

    /// The rewriter's refusal as the error the app sees: a syntax error as SQLite would report it,
    /// a refusal naming its table (the rewriter carries it as a value).
    private func ferryError(_ error: RewriteError, sql: String) -> FerryError {
        switch error {
        case .syntax(let syntax):
            return .sqlite(code: .error, message: "\(syntax)", sql: sql)
        case .unsupported(let table, let reason):
            return .unsupportedDuringMigration(table: table.map { tables[$0]?.mapping.targetName ?? $0 } ?? "", statement: sql, reason: reason)
        case .refused(let table, let reason):
            return .unsupportedDuringMigration(table: table, statement: sql, reason: reason)
        }
    }
}

/// How a statement spells the rowid, found from its tokens.
enum RowidUsage {
    /// The rowid spellings (`rowid`, `oid`, `_rowid_`, lower-cased) used as identifiers.
    static func names(in tokens: [Token], source: SourceText) -> [String] {
        var found = Set<String>()
        for token in tokens where token.kind == .identifier || token.kind == .quotedIdentifier {
            var text = source.string(token.range).lowercased()
            if token.kind == .quotedIdentifier { text = String(text.dropFirst().dropLast()) }
            if text == "rowid" || text == "oid" || text == "_rowid_" { found.insert(text) }
        }
        return found.sorted()
    }
}

/// A bounded map from SQL text to its rewrite, shared by the connections of one database. A new
/// redirector (the migrating tables changed) starts with an empty cache.
final class RedirectCache: Sendable {
    private let entries = Mutex<[String: RedirectedStatement]>([:])
    /// Beyond this many statements the cache starts over (apps use a bounded set of statements).
    static let capacity = 1024

    func lookup(_ sql: String) -> RedirectedStatement? { entries.withLock { $0[sql] } }

    func store(_ statement: RedirectedStatement, for sql: String) {
        entries.withLock {
            if $0.count >= Self.capacity { $0.removeAll(keepingCapacity: true) }
            $0[sql] = statement
        }
    }
}
