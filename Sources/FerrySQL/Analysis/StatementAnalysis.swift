/// The tables a statement names, how it uses each (read, written, schema object), which of them are CTEs, and what
/// each column reference binds to where that can be decided from the text alone.
package struct StatementAnalysis: Sendable {
    /// Every table name, in the order met.
    package internal(set) var tables: [TableAccess] = []
    /// Every FROM item and statement target that columns can bind to.
    package internal(set) var fromItems: [FromItem] = []
    /// Every column reference with its binding.
    package internal(set) var columns: [ColumnUse] = []

    /// Analyses `statement`.
    package init(_ statement: Statement) {
        var walker = AnalysisWalker()
        walker.statement(statement)
        self = walker.result
    }

    init() {}

    /// The real tables (not CTEs) the statement reads, deduplicated by name.
    package var readTables: [QualifiedName] { unique(tables.filter { $0.kind == .read && $0.resolution == .table }) }

    /// The real tables the statement inserts into, updates or deletes from, deduplicated by name.
    package var writtenTables: [QualifiedName] { unique(tables.filter { $0.kind.isWrite }) }

    private func unique(_ accesses: [TableAccess]) -> [QualifiedName] {
        var seen = Set<String>()
        var result: [QualifiedName] = []
        for access in accesses {
            let key = SQLName.key(access.name.schema?.name ?? "") + "." + SQLName.key(access.name.name.name)
            if seen.insert(key).inserted { result.append(access.name) }
        }
        return result
    }
}

/// Walks a statement for ``StatementAnalysis``.
struct AnalysisWalker {
    var result: StatementAnalysis = {
        var analysis = StatementAnalysis()
        analysis.tables.reserveCapacity(4)
        analysis.fromItems.reserveCapacity(4)
        analysis.columns.reserveCapacity(16)
        return analysis
    }()
    /// Names of the CTEs in scope, innermost WITH last (lower-cased keys).
    var cteScopes: [Set<String>] = []
    /// FROM item indices of each open scope, innermost last.
    var scopes: [[Int]] = []
    var inTrigger = false
    var excludedVisible = false
    var context: TableContext = .from

    func isCTE(_ name: QualifiedName) -> Bool {
        guard name.schema == nil else { return false }
        let key = SQLName.key(name.name.name)
        return cteScopes.contains { $0.contains(key) }
    }

    @discardableResult
    mutating func addTable(_ name: QualifiedName, alias: Identifier?, kind: TableAccessKind, hint: IndexHint? = nil,
                           hintLocation: SourceLocation = .none, location: SourceLocation, context: TableContext? = nil) -> Int {
        let resolution: TableResolution = kind == .read && isCTE(name) ? .commonTableExpression : .table
        let ctx: TableContext = inTrigger && kind != .schema ? .triggerBody : (context ?? self.context)
        result.tables.append(TableAccess(name: name, alias: alias, kind: kind, resolution: resolution, context: ctx,
                                         indexHint: hint, location: location, indexHintLocation: hintLocation))
        return result.tables.count - 1
    }

    mutating func addItem(_ exposed: Identifier?, table: Int?) {
        result.fromItems.append(FromItem(exposedName: exposed, table: table, scope: scopes.count - 1))
        scopes[scopes.count - 1].append(result.fromItems.count - 1)
    }

    mutating func withScope(_ body: (inout AnalysisWalker) -> Void) {
        scopes.append([])
        body(&self)
        scopes.removeLast()
    }

    // MARK: Statements

    mutating func statement(_ statement: Statement) {
        switch statement {
        case .select(let s): withScope { $0.select(s) }
        case .insert(let s): insert(s)
        case .update(let s): update(s)
        case .delete(let s): delete(s)
        case .createTable(let s):
            let index = addTable(s.name, alias: nil, kind: .schema, location: .none, context: .schemaObject)
            switch s.definition {
            case .select(let select): withScope { $0.select(select) }
            case .columns(let columns, let constraints, _):
                withScope { walker in
                    walker.addItem(s.name.name, table: index)
                    for column in columns { walker.columnDefinition(column) }
                    for constraint in constraints {
                        switch constraint.kind {
                        case .check(let e, _): walker.expression(e)
                        case .primaryKey(let terms, _, _), .unique(let terms, _): terms.forEach { walker.expression($0.expression) }
                        case .foreignKey(_, let clause):
                            walker.addTable(QualifiedName(clause.table), alias: nil, kind: .schema, location: .none, context: .schemaObject)
                        case nil: break
                        }
                    }
                }
            }
        case .createIndex(let s):
            let qualified = QualifiedName(schema: s.name.schema, s.table)
            let index = addTable(qualified, alias: nil, kind: .schema, location: .none, context: .schemaObject)
            withScope { walker in
                walker.addItem(s.table, table: index)
                s.columns.forEach { walker.expression($0.expression) }
                if let w = s.where { walker.expression(w) }
            }
        case .createView(let s):
            addTable(s.name, alias: nil, kind: .schema, location: .none, context: .schemaObject)
            withScope { $0.select(s.select) }
        case .createTrigger(let s):
            let index = addTable(s.table, alias: nil, kind: .schema, location: s.tableLocation, context: .schemaObject)
            let wasInTrigger = inTrigger
            inTrigger = true
            withScope { walker in
                _ = index
                if let when = s.when { walker.expression(when) }
                for step in s.body { walker.statement(step) }
            }
            inTrigger = wasInTrigger
        case .createVirtualTable(let s):
            addTable(s.name, alias: nil, kind: .schema, location: .none, context: .schemaObject)
        case .alterTable(let s):
            let index = addTable(s.table, alias: nil, kind: .schema, location: .none, context: .schemaObject)
            if case .addColumn(let column) = s.action {
                withScope { walker in
                    walker.addItem(s.table.name, table: index)
                    walker.columnDefinition(column)
                }
            }
        case .drop(let s):
            addTable(s.name, alias: nil, kind: .schema, location: .none, context: .schemaObject)
        case .explain(_, let inner):
            self.statement(inner)
        case .analyze(let name), .reindex(let name):
            if let name { addTable(name, alias: nil, kind: .maintenance, location: .none, context: .schemaObject) }
        case .pragma(let s):
            if s.valueForm == .call, let value = s.value, let first = value.utf8.first, first != 0x2D, first != 0x2B, !(first >= 0x30 && first <= 0x39) {
                addTable(QualifiedName(schema: s.name.schema, Identifier(SQLName.unquoted(value))), alias: nil, kind: .maintenance, location: .none,
                         context: .schemaObject)
            }
        case .attach(let a, let b, let c):
            withScope { walker in
                walker.expression(a)
                walker.expression(b)
                if let c { walker.expression(c) }
            }
        case .detach(let e):
            withScope { $0.expression(e) }
        case .vacuum(_, let into):
            if let into { withScope { $0.expression(into) } }
        case .transaction:
            break
        }
    }

    mutating func columnDefinition(_ column: ColumnDefinition) {
        for constraint in column.constraints {
            switch constraint.kind {
            case .check(let e): expression(e)
            case .default(.expression(let e)): expression(e)
            case .generated(let e, _, _): expression(e)
            case .references(let clause):
                addTable(QualifiedName(clause.table), alias: nil, kind: .schema, location: .none, context: .schemaObject)
            default: break
            }
        }
    }

    mutating func pushWith(_ with: WithClause?) -> Bool {
        guard let with else { return false }
        cteScopes.append(Set(with.tables.map { SQLName.key($0.name.name) }))
        for cte in with.tables {
            withScope { $0.select(cte.select) }
        }
        return true
    }

    mutating func insert(_ s: InsertStatement) {
        let pushed = pushWith(s.with)
        let index = addTable(s.table, alias: s.alias, kind: .insert, location: s.location, context: .target)
        if case .select(let select) = s.source { withScope { $0.select(select) } }
        withScope { walker in
            walker.addItem(s.alias ?? s.table.name, table: index)
            let wasExcluded = walker.excludedVisible
            walker.excludedVisible = true
            for upsert in s.upserts {
                upsert.target?.forEach { walker.expression($0.expression) }
                if let w = upsert.targetWhere { walker.expression(w) }
                if case .update(let assignments, let w) = upsert.action {
                    assignments.forEach { walker.expression($0.value) }
                    if let w { walker.expression(w) }
                }
            }
            walker.excludedVisible = wasExcluded
            walker.resultColumns(s.returning ?? [])
        }
        if pushed { cteScopes.removeLast() }
    }

    mutating func update(_ s: UpdateStatement) {
        let pushed = pushWith(s.with)
        withScope { walker in
            let index = walker.addTable(s.table.name, alias: s.table.alias, kind: .update, hint: s.table.indexHint, hintLocation: s.table.indexHintLocation,
                                        location: s.table.location, context: .target)
            walker.addItem(s.table.alias ?? s.table.name.name, table: index)
            if let from = s.from { walker.joinClause(from) }
            s.assignments.forEach { walker.expression($0.value) }
            if let w = s.where { walker.expression(w) }
            walker.resultColumns(s.returning ?? [])
            s.orderBy.forEach { walker.expression($0.expression) }
            walker.limit(s.limit)
        }
        if pushed { cteScopes.removeLast() }
    }

    mutating func delete(_ s: DeleteStatement) {
        let pushed = pushWith(s.with)
        withScope { walker in
            let index = walker.addTable(s.table.name, alias: s.table.alias, kind: .delete, hint: s.table.indexHint, hintLocation: s.table.indexHintLocation,
                                        location: s.table.location, context: .target)
            walker.addItem(s.table.alias ?? s.table.name.name, table: index)
            if let w = s.where { walker.expression(w) }
            walker.resultColumns(s.returning ?? [])
            s.orderBy.forEach { walker.expression($0.expression) }
            walker.limit(s.limit)
        }
        if pushed { cteScopes.removeLast() }
    }

    // MARK: Queries

    /// Walks a query; the caller has opened a scope for it.
    mutating func select(_ s: SelectStatement) {
        let pushed = pushWith(s.with)
        if s.compounds.isEmpty {
            // ORDER BY and LIMIT of a simple SELECT see its FROM clause.
            withScope { walker in
                walker.selectCore(s.first)
                s.orderBy.forEach { walker.expression($0.expression) }
                walker.limit(s.limit)
            }
        } else {
            withScope { $0.selectCore(s.first) }
            for compound in s.compounds { withScope { $0.selectCore(compound.core) } }
            withScope { walker in
                s.orderBy.forEach { walker.expression($0.expression) }
                walker.limit(s.limit)
            }
        }
        if pushed { cteScopes.removeLast() }
    }

    mutating func limit(_ limit: LimitClause?) {
        guard let limit else { return }
        expression(limit.limit)
        if let offset = limit.offset { expression(offset) }
    }

    /// Walks one core in the current (fresh) scope.
    mutating func selectCore(_ core: SelectCore) {
        switch core {
        case .values(let rows):
            for row in rows { row.forEach { expression($0) } }
        case .select(let c):
            if let from = c.from { joinClause(from) }
            resultColumns(c.columns)
            if let w = c.where { expression(w) }
            c.groupBy.forEach { expression($0) }
            if let h = c.having { expression(h) }
            for window in c.windows { windowDefinition(window.definition) }
        }
    }

    mutating func resultColumns(_ columns: [ResultColumn]) {
        for column in columns {
            if case .expression(let e, _) = column { expression(e) }
        }
    }

    /// Adds the items of a FROM clause to the current scope and walks their subqueries and ON constraints.
    mutating func joinClause(_ clause: JoinClause) {
        fromItem(clause.first)
        for join in clause.joins { fromItem(join.item) }
        for join in clause.joins {
            if case .on(let e) = join.constraint { expression(e) }
        }
    }

    mutating func fromItem(_ item: TableOrSubquery) {
        switch item {
        case .table(let reference):
            let index = addTable(reference.name, alias: reference.alias, kind: .read, hint: reference.indexHint, hintLocation: reference.indexHintLocation,
                                 location: reference.location, context: .from)
            addItem(reference.alias ?? reference.name.name, table: index)
        case .tableFunction(let function):
            function.arguments.forEach { expression($0) }
            addItem(function.alias ?? function.name.name, table: nil)
        case .subquery(let select, let alias):
            withScope { $0.select(select) }
            addItem(alias, table: nil)
        case .join(let clause, let alias):
            if let alias {
                withScope { $0.joinClause(clause) }
                addItem(alias, table: nil)
            } else {
                // An unaliased parenthesized join exposes its items directly.
                joinClause(clause)
            }
        }
    }

    mutating func windowDefinition(_ definition: WindowDefinition) {
        definition.partitionBy.forEach { expression($0) }
        definition.orderBy.forEach { expression($0.expression) }
        if let frame = definition.frame {
            for bound in [frame.start, frame.end] {
                switch bound {
                case .preceding(let e)?, .following(let e)?: expression(e)
                default: break
                }
            }
        }
    }

    // MARK: Expressions

    /// Walks an expression. Each kind is handled by a small function, without closures, so deep expressions use
    /// little stack.
    mutating func expression(_ e: Expression) {
        switch e {
        case .literal, .parameter, .raise(.ignore): return
        case .column(let reference): column(reference)
        case .unary(_, let operand), .collate(let operand, _), .cast(let operand, _), .nullTest(let operand, _): expression(operand)
        case .binary(let first, let terms): binary(first, terms)
        case .raise(.rollback(let m)), .raise(.abort(let m)), .raise(.fail(let m)): expression(m)
        default: compound(e)
        }
    }

    @inline(never)
    mutating func column(_ reference: ColumnReference) {
        result.columns.append(ColumnUse(reference: reference, binding: resolve(reference)))
    }

    @inline(never)
    mutating func binary(_ first: Expression, _ terms: [BinaryTerm]) {
        expression(first)
        for term in terms { expression(term.rhs) }
    }

    @inline(never)
    mutating func expressions(_ list: [Expression]) {
        for item in list { expression(item) }
    }

    @inline(never)
    mutating func compound(_ e: Expression) {
        switch e {
        case .exists(let select), .subquery(let select):
            withScope { $0.select(select) }
        case .in(let inExpression):
            expression(inExpression.value)
            switch inExpression.target {
            case .list(let items): expressions(items)
            case .select(let select): withScope { $0.select(select) }
            case .table(let name, let location):
                addTable(name, alias: nil, kind: .read, location: location, context: .inOperator)
            case .tableFunction(_, let arguments): expressions(arguments)
            }
        case .function(let call):
            if case .list(let arguments) = call.arguments { expressions(arguments) }
            for term in call.orderBy { expression(term.expression) }
            if let filter = call.filter { expression(filter) }
            if case .definition(let definition)? = call.over { windowDefinition(definition) }
        case .case(let c):
            if let base = c.base { expression(base) }
            for branch in c.branches {
                expression(branch.when)
                expression(branch.then)
            }
            if let otherwise = c.otherwise { expression(otherwise) }
        case .like(let like):
            expression(like.lhs)
            expression(like.pattern)
            if let escape = like.escape { expression(escape) }
        case .between(let between):
            expression(between.value)
            expression(between.lower)
            expression(between.upper)
        case .row(let items):
            expressions(items)
        default:
            break
        }
    }

    func resolve(_ reference: ColumnReference) -> ColumnBinding {
        guard let table = reference.table else {
            for scope in scopes.reversed() where !scope.isEmpty {
                return scope.count == 1 ? .item(scope[0]) : .candidates(scope)
            }
            return .unresolved
        }
        for scope in scopes.reversed() {
            for index in scope {
                let item = result.fromItems[index]
                guard let exposed = item.exposedName, exposed.matches(table) else { continue }
                if let schema = reference.schema {
                    guard let t = item.table, let s = result.tables[t].name.schema ?? Optional(Identifier("main")),
                          s.matches(schema) else { continue }
                }
                return .item(index)
            }
        }
        if inTrigger && reference.schema == nil && (table.matches("new") || table.matches("old")) { return .triggerRow(table) }
        if excludedVisible && reference.schema == nil && table.matches("excluded") { return .excluded }
        return .unresolved
    }
}
