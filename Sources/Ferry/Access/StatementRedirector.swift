import FerrySQL
import FerrySQLite
import Synchronization

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

    /// The plan of one statement (from the cache when the same text was planned before).
    /// - Throws: `FerryError.unsupported` / `.unsupportedDuringMigration` for statements that
    ///   cannot be made to behave like the finished table, with the reason.
    func plan(_ sql: String) throws(FerryError) -> StatementPlan {
        if isEmpty { return .unchanged(sql) }
        if let cached = cache.lookup(sql) { return cached }
        let plan = try planUncached(sql)
        cache.store(plan, for: sql)
        return plan
    }

    /// The plan of one statement, without looking in the cache or storing in it. The text is
    /// tokenized once and parsed at most once (`ParsedStatement`).
    func planUncached(_ sql: String) throws(FerryError) -> StatementPlan {
        do throws(RewriteError) {
            let tokens: [Token]
            do { tokens = try Tokenizer.tokenize(sql) } catch { throw RewriteError.syntax(error) }
            let rowidNames = RowidUsage.names(in: tokens, source: SourceText(sql))
            let outcome = try Rewriter(policy: policy(rowidNames: rowidNames)).resolve(sql, tokens: tokens)
            var plan: StatementPlan
            switch outcome.action {
            case .unchanged:
                if tokens.first?.keyword == .pragma, let statement = outcome.parsed?.statement ?? (try? Parser.parseStatement(sql)),
                   let check = try foreignKeyCheck(statement, sql: sql) {
                    return check
                }
                plan = .unchanged(sql)
            case .rewritten(let text):
                plan = StatementPlan(preparation: nil, statement: HashedSQL(text), isUnchanged: false)
            case .write(let request):
                plan = try writePlan(request, rowidNames: rowidNames)
            case .other(let request):
                if let check = try foreignKeyCheck(request.statement, sql: sql) { return check }
                plan = try otherPlan(request)
            }
            plan.migratingTables = migratingTables(reading: outcome)
            plan.rewritesTriggerText = tokens.first?.keyword == .alter
            if let parsed = outcome.parsed, !rowidNames.isEmpty, !plan.migratingTables.isEmpty, parsed.analysis.fromItems.count > 1 {
                plan.finishedShapeCheck = try finishedShape(parsed, rowidNames: rowidNames).map(HashedSQL.init)
            }
            switch outcome.action {
            case .rewritten, .write:  // a read or a write of a migrating table may pin its key
                if let parsed = outcome.parsed { plan.keyShortcut = try keyShortcut(parsed, outcome: outcome, plan: plan, rowidNames: rowidNames) }
            case .unchanged, .other:
                break
            }
            return plan
        } catch {
            throw ferryError(error, sql: sql)
        }
    }

    /// The plan of a statement that writes a listed table: a write of a migrating table first
    /// moves the pending rows it may touch (`RowMovePlan`); a write of a same-file source or of a
    /// view reading a migrating table is refused; any other runs with its reads rewritten.
    /// - Parameter rowidNames: the rowid spellings the statement uses.
    private func writePlan(_ request: WriteRequest, rowidNames: [String]) throws(RewriteError) -> StatementPlan {
        if protectedSources.contains(request.table) {
            throw RewriteError.refused(table: request.table, reason: "it is the source of a migration in progress and is read-only until the migration finishes")
        }
        if views[request.table] != nil || unreadableViews.contains(request.table) {
            throw RewriteError.refused(table: request.table, reason: "view \(request.table) reads a migrating table; writes through it (INSTEAD OF triggers) must wait until the migration finishes")
        }
        let moves = try tables[request.table].flatMap { table throws(RewriteError) in
            try RowMovePlan.ahead(of: request, table: table) { selection throws(RewriteError) in
                try redirectReads(selection, alsoExposing: rowidNames, pendingRowsOf: table)
            }
        }
        return StatementPlan(preparation: moves.map { .moveRows($0) }, statement: HashedSQL(request.sqlWithReadsRewritten), isUnchanged: false)
    }

    /// The plan of a schema statement, pragma or other statement naming a listed table: `DROP
    /// TABLE` of a migrating target ends its migration; a name of an attached source means main's
    /// table; the schema statements that behave as on the finished table run (`SchemaStatements`);
    /// anything else is refused.
    private func otherPlan(_ request: OtherStatementRequest) throws(RewriteError) -> StatementPlan {
        if let drop = dropOfMigratingTable(request.statement) { return drop }
        // Only names of attached sources (a table the app may create in main, e.g. after dropping
        // or renaming its migrating table): main's, as on the finished table.
        if request.tables.isSubset(of: shadowedSourceTables.union(awaitingCleanup)) {
            var effects: [SchemaEffect] = []
            if case .alterTable(let alter) = request.statement, case .renameTable(let new) = alter.action,
               awaitingCleanup.contains(alter.table.name.name.lowercased()) {
                // Cleanup finds the finished table by name: Ferry's state follows the rename.
                effects.append(.tableRenamed(old: alter.table.name.name, new: new.name))
            }
            let inMain = request.tables.isSubset(of: shadowedSourceTables) ? Self.inMain(request.statement) : nil
            return StatementPlan(preparation: nil, statement: HashedSQL(inMain.map { Printer().print($0) } ?? request.originalSQL),
                                 isUnchanged: false, effects: effects)
        }
        if let plan = try schemaPlan(request) { return plan }
        throw RewriteError.refused(table: request.tables.sorted().joined(separator: ", "),
                                   reason: "this schema change or pragma on a migrating table must wait until its migration finishes (see Limitations)")
    }

    /// The migrating tables an outcome's statement reads or writes, directly or through views.
    private func migratingTables(reading outcome: RewriteOutcome) -> Set<String> {
        var named = outcome.reads.union(outcome.writes)
        if case .other(let request) = outcome.action { named.formUnion(request.tables) }
        var result = Set<String>()
        for name in named {
            if tables[name] != nil { result.insert(name) }
            if let view = views[name] { result.formUnion(view.migratingTables) }
        }
        return result
    }

    /// The shortcut of a point statement on a migrating table (see `KeyShortcut`): a SELECT whose
    /// `WHERE` pins the table's rowid reads the target alone (its other reads as `plan` has them);
    /// an UPDATE or DELETE so pinned runs without its moves. Nil for other statements, and for
    /// tables whose rowids do not follow their source's order.
    private func keyShortcut(_ parsed: ParsedStatement, outcome: RewriteOutcome, plan: StatementPlan,
                             rowidNames: [String]) throws(RewriteError) -> KeyShortcut? {
        let candidates = outcome.writes.isEmpty ? outcome.reads : outcome.writes
        guard candidates.contains(where: { tables[$0].map(KeyShortcut.applies(to:)) ?? false }) else { return nil }
        for name in candidates.sorted() {
            guard let table = tables[name], KeyShortcut.applies(to: table),
                  let key = PinnedKey.find(in: parsed.statement, analysis: parsed.analysis, table: name, tables: tableSet,
                                           keyColumns: KeyShortcut.keyColumns(of: table.mapping))
            else { continue }
            if outcome.writes.isEmpty {
                let targetOnly = try Rewriter(policy: policy(rowidNames: rowidNames, readingTargetsOnly: [name])).resolve(parsed: parsed)
                return KeyShortcut(table: table.mapping.registeredName, key: key, statement: HashedSQL(try Self.readSQL(targetOnly, sql: parsed.sql)))
            }
            return KeyShortcut(table: table.mapping.registeredName, key: key, statement: plan.statement)
        }
        return nil
    }

    /// The statement with every migrating table read from its target alone, whose tables have the
    /// finished tables' shape: compiling it finds the name errors of the finished database. A
    /// union exposes a rowid it reads as a column, which SQLite resolves before any table's rowid,
    /// so an unqualified `rowid` over a join (ambiguous on the finished tables) would bind to the
    /// union. Nil for a schema statement.
    private func finishedShape(_ parsed: ParsedStatement, rowidNames: [String]) throws(RewriteError) -> String? {
        let outcome = try Rewriter(policy: policy(rowidNames: rowidNames, readingTargetsOnly: Set(tables.keys))).resolve(parsed: parsed)
        switch outcome.action {
        case .unchanged: return parsed.sql
        case .rewritten(let text): return text
        case .write(let request): return request.sqlWithReadsRewritten
        case .other: return nil
        }
    }

    /// The text of a read's outcome (a read never comes back as a write or schema request).
    private static func readSQL(_ outcome: RewriteOutcome, sql: String) throws(RewriteError) -> String {
        switch outcome.action {
        case .unchanged: return sql
        case .rewritten(let text): return text
        case .write, .other: throw RewriteError.unsupported(table: nil, reason: "expected a query")
        }
    }

    /// How the rewriter serves a statement that spells the rowid as `rowidNames`: reads of a
    /// migrating table become its union (writes and schema statements come back to `writePlan`
    /// and `otherPlan`).
    /// - Parameter targetOnly: migrating tables read from their target alone (a `KeyShortcut`, the
    ///   finished shape's name check).
    private func policy(rowidNames: [String], readingTargetsOnly targetOnly: Set<String> = []) -> RewritePolicy {
        var policy = RewritePolicy(tables: tableSet, replacementForRead: { [self] name throws(RewriteError) in
            try replacement(forRead: name, hint: nil, rowidNames: rowidNames, targetOnly: targetOnly)
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
        policy.reshapedColumns = reshapedColumns(except: targetOnly)
        policy.aggregateArms = { [tables] name throws(RewriteError) in
            targetOnly.contains(name) ? nil : try tables[name]?.aggregateArms(exposingRowidAs: rowidNames)
        }
        policy.rowidResultName = { [self] name, spelling in
            // SQLite names a result column reading the rowid after the INTEGER PRIMARY KEY column, if
            // any; a real column of that spelling is the column, named as such.
            guard let table = tables[name], table.mapping.target.unshadowedRowidSpellings.contains(spelling) else { return nil }
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
    private func dropOfMigratingTable(_ statement: FerrySQL.Statement) -> StatementPlan? {
        guard case .drop(let drop) = statement, drop.kind == .table,
              let table = tables[drop.name.name.name.lowercased()],
              drop.name.schema == nil || drop.name.schema?.name.lowercased() == "main"
        else { return nil }
        let ending = Preparation.endMigration(table: table.mapping.targetName.lowercased(), statements: table.dropStatements.map(HashedSQL.init))
        return StatementPlan(preparation: ending, statement: HashedSQL("PRAGMA temp.user_version = 0"), isUnchanged: false)  // a no-op without result columns
    }

    /// `PRAGMA foreign_key_check` (of every table, or of one) when a foreign key involves a
    /// migrating table: SQLite would check the moved rows alone, against moved parents alone. It
    /// becomes a query with the pragma's columns over the finished tables (each migrating one read
    /// as its union): a child row whose key columns are all non-NULL and match no parent row,
    /// ordered by table, rowid and key.
    private func foreignKeyCheck(_ statement: FerrySQL.Statement, sql: String) throws(RewriteError) -> StatementPlan? {
        guard case .pragma(let pragma) = statement, pragma.name.name.name.lowercased() == "foreign_key_check",
              pragma.name.schema == nil || pragma.name.schema?.name.lowercased() == "main"
        else { return nil }
        let only = pragma.value.map { SQLName.unquoted($0).lowercased() }
        let edges = foreignKeys.filter { only == nil || $0.child.lowercased() == only }
        let involved = Set(edges.flatMap { [$0.child.lowercased(), $0.parent.lowercased()] }).filter { tables[$0] != nil }
        guard !involved.isEmpty else {
            // No key involves a migrating table: SQLite's own answer is the finished tables'.
            return .unchanged(sql)
        }
        let arms = edges.map { edge -> String in
            let bound = edge.childColumns.map { "c.\(q($0)) IS NOT NULL" }
            let match = zip(edge.parentColumns, edge.childColumns).map { "p.\(q($0)) = c.\(q($1))" }
            return "SELECT \(sqlString(edge.child)) AS \"table\", \(edge.childHasRowid ? "c.rowid" : "NULL") AS rowid, "
                + "\(sqlString(edge.parent)) AS parent, \(edge.id) AS fkid FROM \(q(edge.child)) AS c "
                + "WHERE \(bound.joined(separator: " AND ")) AND NOT EXISTS (SELECT 1 FROM \(q(edge.parent)) AS p WHERE \(match.joined(separator: " AND ")))"
        }
        let query = "SELECT * FROM (\(arms.joined(separator: " UNION ALL "))) ORDER BY 1, 2, 4"
        var plan = StatementPlan(preparation: nil, statement: HashedSQL(try redirectReads(query, forFerry: false)), isUnchanged: false)
        plan.migratingTables = involved
        return plan
    }

    /// The body of a dependent view with its reads of migrating tables (and other views) rewritten.
    private func expandedBody(of view: DependentView) throws(RewriteError) -> String {
        let tokens: [Token]
        do { tokens = try Tokenizer.tokenize(view.body) } catch { throw .syntax(error) }
        let rowidNames = RowidUsage.names(in: tokens, source: SourceText(view.body))
        return try Self.readSQL(Rewriter(policy: policy(rowidNames: rowidNames)).resolve(view.body, tokens: tokens), sql: view.body)
    }

    /// Rewrites the reads of a helper query built by the redirector (exposing rowid, NULL for the
    /// rows of a target without one).
    /// - Parameter forFerry: false when the rowids the query reads are shown to the app (they
    ///   are then the finished table's, see `MigratingTableSQL.unionSelect`).
    /// - Parameter pendingRowsOf: the table whose pending rows `pendingRowsName` reads (the rows a
    ///   write may move: see `affectedRowSelection`).
    /// - Parameter alsoExposing: rowid spellings the query's own text uses besides `rowid` (the
    ///   app's, in a write's condition): exposed too, so that `oid` reads the rowid where a real
    ///   column is named `rowid`.
    func redirectReads(_ sql: String, forFerry: Bool = true, alsoExposing spellings: [String] = [],
                       pendingRowsOf pending: MigratingTableSQL? = nil) throws(RewriteError) -> String {
        let names = pending == nil ? tableSet : tableSet.adding("main.\(RowMovePlan.pendingRowsName)")
        let rowidNames = ["rowid"] + spellings.filter { $0 != "rowid" }
        var policy = RewritePolicy(tables: names) { [self] name throws(RewriteError) in
            if let pending, name == RowMovePlan.pendingRowsName { return .subquery(try pending.pendingSelect()) }
            return try replacement(forRead: name, hint: nil, rowidNames: rowidNames, forFerry: forFerry)
        }
        policy.replacementForHintedRead = { [self] name, hint throws(RewriteError) in
            try replacement(forRead: name, hint: hint, rowidNames: rowidNames, forFerry: forFerry)
        }
        policy.starColumns = starColumns(rowidNames: rowidNames)
        policy.reshapedColumns = reshapedColumns(pendingRowsOf: pending)
        return try Rewriter(policy: policy).rewrite(sql).statements[0]
    }

    /// The columns `*` shows on a migrating table, when its union also exposes the rowid (under
    /// `rowidNames`): `*` is then spelled out so that it shows the finished table's columns alone.
    private func starColumns(rowidNames: [String], except targetOnly: Set<String> = []) -> (@Sendable (String) -> [String]?)? {
        if rowidNames.isEmpty { return nil }
        return { [tables] name in targetOnly.contains(name) ? nil : tables[name]?.mapping.target.columns.map(\.name) }
    }

    /// The migrating tables' reshaped columns (`MigratingTableSQL.reshapedColumns`), for the
    /// rewriter's comparisons; the pending rows a write's selection reads are `pending`'s.
    private func reshapedColumns(except targetOnly: Set<String> = [], pendingRowsOf pending: MigratingTableSQL? = nil) -> ReshapedColumns? {
        let columns = tables.filter { !targetOnly.contains($0.key) }.mapValues(\.reshapedColumns).filter { !$0.value.isEmpty }
        let pendingColumns = pending?.reshapedColumns ?? [:]
        if columns.isEmpty && pendingColumns.isEmpty { return nil }
        return ReshapedColumns(function: Connection.affinityFunction) { name in
            name == RowMovePlan.pendingRowsName ? pendingColumns : columns[name]
        }
    }

    /// What a read of the listed relation `name` becomes, exposing the rowid as `rowidNames`:
    /// - a migrating table: its union, with the app's `INDEXED BY` / `NOT INDEXED` on the target's
    ///   arm (its indexes are the finished table's);
    /// - a view reading one: the view expanded (SQLite refuses a hint on a view, on the finished
    ///   table too); a view Ferry cannot parse is refused;
    /// - a same-file source (read as is), or an attached source's name read unqualified: main's
    ///   table, as if no source were attached (a hint stays as written);
    /// - a migrating table in `targetOnly`: its target alone (a hint stays as written).
    private func replacement(forRead name: String, hint: IndexHint?, rowidNames: [String], forFerry: Bool = false,
                             targetOnly: Set<String> = []) throws(RewriteError) -> TableReplacement {
        if let table = tables[name] {
            if targetOnly.contains(name) { return .table(QualifiedName(schema: Identifier("main"), Identifier(table.mapping.target.name))) }
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
    private let entries = Mutex<[String: StatementPlan]>([:])
    /// Beyond this many statements the cache starts over (apps use a bounded set of statements).
    static let capacity = 1024

    func lookup(_ sql: String) -> StatementPlan? { entries.withLock { $0[sql] } }

    func store(_ statement: StatementPlan, for sql: String) {
        entries.withLock {
            if $0.count >= Self.capacity { $0.removeAll(keepingCapacity: true) }
            $0[sql] = statement
        }
    }
}
