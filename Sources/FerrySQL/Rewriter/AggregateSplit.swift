/// How a listed table's rows split into arms whose aggregates combine into the table's: the
/// target's rows, then the rows not moved yet (see ``AggregateSplit``).
package struct AggregateArms: Sendable, Hashable {
    /// Each arm as a query (without parentheses) showing the table's columns under the table's
    /// names, each column comparing under the collation the table gives it.
    package var arms: [String]
    /// The collation of each column on the finished table (lower-cased column name → collation);
    /// a column not listed compares under BINARY.
    package var collations: [String: String]

    /// Creates the arms.
    package init(arms: [String], collations: [String: String]) {
        self.arms = arms
        self.collations = collations
    }
}

/// Computes a whole-table aggregate over a union per arm, then combines the arms' results:
/// `SELECT count(*), max(a) FROM t WHERE w` becomes one `count(*)` and one `max(a)` over each arm
/// (the target's rows, the rows not moved yet), added and compared. SQLite evaluates an aggregate
/// over a `UNION ALL` in `FROM` by copying every row through the union; per arm it reads the
/// table (or a covering index) directly, as on the finished table.
///
/// Only a query whose answer is exactly the finished table's is split: a top-level `SELECT` of
/// one listed table (no join, index hint, `DISTINCT`, `GROUP BY`, `HAVING`, window, `ORDER BY` or
/// compound), whose result columns use the table's columns only inside `count`, `sum`, `total`,
/// `avg`, `min` and `max` (one argument, no `DISTINCT` or `ORDER BY` inside, `FILTER` allowed),
/// with no subquery and no named parameter anywhere (anonymous `?` are numbered, so each arm
/// binds the same values). Anything else reads the union.
///
/// Each combination matches SQLite's own aggregate: `count` and `total` add; `sum` adds, stays
/// NULL when both are, and fails with "integer overflow" where SQLite's would; `avg` divides the
/// added `total` by the added `count`; `min` and `max` compare under the argument's collation as
/// SQLite derives it (a column's, or an explicit `COLLATE`), ties going to the target's arm, which
/// the union reads first.
struct AggregateSplit {
    let arms: AggregateArms
    /// The name the query gives the table (its alias, or its name).
    let exposedName: Identifier

    /// The query rewritten, or nil when `statement` is not a query this split serves.
    /// - Parameter resultColumns: the spans of the statement's result columns (unaliased ones are
    ///   named after their text, as SQLite names them).
    static func rewrite(_ statement: Statement, source: SourceText, resultColumns: [ResultColumnSpan], tables: TableSet,
                        armsOf: (String) throws(RewriteError) -> AggregateArms?) throws(RewriteError) -> String? {
        guard case .select(let select) = statement, select.with == nil, select.compounds.isEmpty, select.orderBy.isEmpty,
              case .select(let core) = select.first, core.quantifier == nil, core.groupBy.isEmpty, core.having == nil,
              core.windows.isEmpty, let from = core.from, from.joins.isEmpty, case .table(let reference) = from.first,
              reference.indexHint == nil, let key = tables.match(reference.name),
              resultColumns.count == core.columns.count
        else { return nil }
        let limitParts = [select.limit?.limit, select.limit?.offset].compactMap { $0 }
        guard limitParts.allSatisfy({ isPlain($0, allowingColumns: false) }) else { return nil }
        let exposedName = reference.alias ?? reference.name.name
        // Checks that need no arms first: most single-table reads are not aggregates, and the arms
        // are built from the table's shape.
        guard core.columns.contains(where: callsAnAggregate),
              core.where.map({ isRowExpression($0, exposedName: exposedName) }) ?? true,
              let arms = try armsOf(key), !arms.arms.isEmpty
        else { return nil }
        let split = AggregateSplit(arms: arms, exposedName: exposedName)

        var parts: [Part] = []
        var outputs: [String] = []
        let printer = Printer(options: PrinterOptions(numberAnonymousParameters: true))
        for (index, column) in core.columns.enumerated() {
            guard case .expression(let expression, let alias) = column,
                  let combined = split.replacingAggregates(expression, parts: &parts)
            else { return nil }
            var name = SQLWriter(options: PrinterOptions(identifierQuoting: .always))
            name.identifier(alias ?? Identifier(source.string(resultColumns[index].range)))
            outputs.append(printer.print(combined) + " AS " + name.output)
        }
        guard !parts.isEmpty else { return nil }  // not an aggregate query

        var exposed = SQLWriter(options: PrinterOptions())
        exposed.identifier(split.exposedName)
        let condition = core.where.map { " WHERE " + printer.print($0) } ?? ""
        let items = parts.enumerated().flatMap { index, part in
            part.armItems(printer: printer).enumerated().map { "\($1) AS ferry_p\(index)_\($0)" }
        }
        var armQueries: [String] = []
        for (armIndex, arm) in arms.arms.enumerated() {
            armQueries.append("(SELECT \(items.joined(separator: ", ")) FROM (\(arm)) AS \(exposed.output)\(condition)) AS ferry_arm_\(armIndex)")
        }
        let combined = parts.enumerated().map { index, part in
            part.combined(arms: (0..<arms.arms.count).map { arm in { (item: Int) in "ferry_arm_\(arm).ferry_p\(index)_\(item)" } })
                + " AS ferry_aggregate_\(index)"
        }
        var sql = "SELECT \(outputs.joined(separator: ", ")) FROM (SELECT \(combined.joined(separator: ", ")) FROM \(armQueries.joined(separator: ", ")))"
        if let limit = select.limit {
            sql += " LIMIT " + printer.print(limit.limit)
            if let offset = limit.offset { sql += " OFFSET " + printer.print(offset) }
        }
        return sql
    }

    // MARK: Aggregates

    /// One aggregate of the query: what each arm computes, and how the arms' values combine.
    struct Part {
        enum Kind { case count, sum, total, average, minimum, maximum }
        let kind: Kind
        /// The call as each arm runs it (`avg` runs as `total` and `count`).
        let call: FunctionCall
        /// For `min` and `max`: the collation their comparison uses.
        let collation: String?

        /// The expressions each arm selects for this part.
        func armItems(printer: Printer) -> [String] {
            switch kind {
            case .average:
                var total = call
                total.name = Identifier("total")
                var count = call
                count.name = Identifier("count")
                return [printer.print(.function(total)), printer.print(.function(count))]
            case .minimum, .maximum:
                // The arm compares under the finished table's collation, whatever the arm's column says.
                var compared = call
                if case .list(let arguments) = call.arguments, let collation {
                    compared.arguments = .list([.collate(arguments[0], Identifier(collation))])
                }
                return [printer.print(.function(compared))]
            default:
                return [printer.print(.function(call))]
            }
        }

        /// The combination of the arms' values; `arms[k](i)` names item `i` of arm `k`.
        func combined(arms: [(Int) -> String]) -> String {
            switch kind {
            case .count, .total:
                return "(" + arms.map { $0(0) }.joined(separator: " + ") + ")"
            case .average:
                let total = "(" + arms.map { $0(0) }.joined(separator: " + ") + ")"
                let count = "(" + arms.map { $0(1) }.joined(separator: " + ") + ")"
                return "(CASE WHEN \(count) = 0 THEN NULL ELSE \(total) / \(count) END)"
            case .sum:
                return arms.dropFirst().reduce(arms[0](0)) { sum, arm in Self.checkedSum(sum, arm(0)) }
            case .minimum, .maximum:
                let op = kind == .maximum ? ">" : "<"
                var name = SQLWriter(options: PrinterOptions(identifierQuoting: .always))
                name.identifier(Identifier(collation ?? "BINARY"))
                let collation = name.output
                return arms.dropFirst().reduce(arms[0](0)) { best, arm in
                    let value = arm(0)
                    return "(CASE WHEN \(value) IS NULL THEN \(best) WHEN \(best) IS NULL THEN \(value) "
                        + "WHEN \(value) COLLATE \(collation) \(op) \(best) THEN \(value) ELSE \(best) END)"
                }
            }
        }

        /// `a + b` as `sum()` would end: NULL when both are, the other one when one is, and
        /// "integer overflow" when two integers overflow (the `abs` of the smallest integer fails
        /// with that message; it reads `a`, so SQLite does not compute it ahead as a constant).
        static func checkedSum(_ a: String, _ b: String) -> String {
            let overflows = "typeof(\(a)) = 'integer' AND typeof(\(b)) = 'integer' AND "
                + "((\(b) > 0 AND \(a) > 9223372036854775807 - \(b)) OR (\(b) < 0 AND \(a) < -9223372036854775807 - 1 - \(b)))"
            return "(CASE WHEN \(a) IS NULL THEN \(b) WHEN \(b) IS NULL THEN \(a) "
                + "WHEN \(overflows) THEN abs(-9223372036854775807 - 1 + 0 * \(a)) ELSE \(a) + \(b) END)"
        }
    }

    /// `expression` with every aggregate call replaced by a reference to its combined value
    /// (`ferry_aggregate_N`, appended to `parts`); nil when a column is used outside an
    /// aggregate, or when something cannot be split.
    func replacingAggregates(_ expression: Expression, parts: inout [Part]) -> Expression? {
        func map(_ e: Expression) -> Expression? { replacingAggregates(e, parts: &parts) }
        switch expression {
        case .literal:
            return expression
        case .parameter(let parameter):
            return parameter.text.hasPrefix("?") ? expression : nil
        case .column, .exists, .subquery, .raise:
            return nil
        case .unary(let op, let operand):
            return map(operand).map { .unary(op, $0) }
        case .binary(let first, let terms):
            guard let mappedFirst = map(first) else { return nil }
            var mappedTerms: [BinaryTerm] = []
            for term in terms {
                guard let rhs = map(term.rhs) else { return nil }
                mappedTerms.append(BinaryTerm(term.op, rhs))
            }
            return .binary(mappedFirst, mappedTerms)
        case .collate(let operand, let name):
            return map(operand).map { .collate($0, name) }
        case .cast(let operand, let type):
            return map(operand).map { .cast($0, type) }
        case .nullTest(let operand, let isNull):
            return map(operand).map { .nullTest($0, isNull: isNull) }
        case .case(var value):
            if let base = value.base { guard let mapped = map(base) else { return nil }; value.base = mapped }
            for index in value.branches.indices {
                guard let when = map(value.branches[index].when), let then = map(value.branches[index].then) else { return nil }
                value.branches[index].when = when
                value.branches[index].then = then
            }
            if let otherwise = value.otherwise { guard let mapped = map(otherwise) else { return nil }; value.otherwise = mapped }
            return .case(value)
        case .like(var like):
            guard let lhs = map(like.lhs), let pattern = map(like.pattern) else { return nil }
            like.lhs = lhs
            like.pattern = pattern
            if let escape = like.escape { guard let mapped = map(escape) else { return nil }; like.escape = mapped }
            return .like(like)
        case .between(var between):
            guard let value = map(between.value), let lower = map(between.lower), let upper = map(between.upper) else { return nil }
            (between.value, between.lower, between.upper) = (value, lower, upper)
            return .between(between)
        case .in(var value):
            guard case .list(let items) = value.target, let mapped = map(value.value) else { return nil }
            var mappedItems: [Expression] = []
            for item in items {
                guard let mappedItem = map(item) else { return nil }
                mappedItems.append(mappedItem)
            }
            value.value = mapped
            value.target = .list(mappedItems)
            return .in(value)
        case .row(let items):
            var mappedItems: [Expression] = []
            for item in items {
                guard let mappedItem = map(item) else { return nil }
                mappedItems.append(mappedItem)
            }
            return .row(mappedItems)
        case .function(var call):
            guard call.over == nil else { return nil }
            if let part = aggregatePart(call) {
                parts.append(part)
                return .column(ColumnReference(column: Identifier("ferry_aggregate_\(parts.count - 1)")))
            }
            // A scalar function over aggregates (`coalesce(max(a), 0)`); an aggregate this split
            // does not serve, or a column outside an aggregate, makes the whole query read the union.
            guard call.quantifier == nil, call.orderBy.isEmpty, call.filter == nil,
                  !Self.isAggregate(call)
            else { return nil }
            if case .list(let arguments) = call.arguments {
                var mapped: [Expression] = []
                for argument in arguments {
                    guard let mappedArgument = map(argument) else { return nil }
                    mapped.append(mappedArgument)
                }
                call.arguments = .list(mapped)
            }
            return .function(call)
        }
    }

    /// SQLite's built-in aggregates (the ones a split serves, and the ones that keep a query whole).
    static let aggregateNames: Set<String> = ["count", "sum", "total", "avg", "min", "max", "group_concat", "string_agg",
                                              "json_group_array", "json_group_object", "jsonb_group_array", "jsonb_group_object"]

    /// True when the result column calls a built-in aggregate somewhere (a query without one is
    /// not split).
    static func callsAnAggregate(_ column: ResultColumn) -> Bool {
        guard case .expression(let expression, _) = column else { return false }
        var found = false
        expression.forEachSubexpression { node in
            if case .function(let call) = node, call.over == nil, isAggregate(call) {
                found = true
            }
        }
        return found
    }

    /// True for a call of a built-in aggregate (`min` and `max` with one argument only).
    static func isAggregate(_ call: FunctionCall) -> Bool { aggregateNames.contains(call.name.name.lowercased()) && !isScalarMinMax(call) }

    /// `min(a, b, ...)` and `max(a, b, ...)` with several arguments are scalar functions.
    static func isScalarMinMax(_ call: FunctionCall) -> Bool {
        guard ["min", "max"].contains(call.name.name.lowercased()), case .list(let arguments) = call.arguments else { return false }
        return arguments.count > 1
    }

    /// The part `call` is, when it is an aggregate the split serves over row expressions.
    func aggregatePart(_ call: FunctionCall) -> Part? {
        guard call.quantifier != .distinct, call.orderBy.isEmpty else { return nil }
        if let filter = call.filter, !isRowExpression(filter) { return nil }
        let name = call.name.name.lowercased()
        let arguments: [Expression]
        switch call.arguments {
        case .star:
            guard name == "count" else { return nil }
            return Part(kind: .count, call: call, collation: nil)
        case .list(let list):
            arguments = list
        }
        if name == "count" && arguments.isEmpty { return Part(kind: .count, call: call, collation: nil) }
        guard arguments.count == 1, isRowExpression(arguments[0]) else { return nil }
        switch name {
        case "count": return Part(kind: .count, call: call, collation: nil)
        case "sum": return Part(kind: .sum, call: call, collation: nil)
        case "total": return Part(kind: .total, call: call, collation: nil)
        case "avg": return Part(kind: .average, call: call, collation: nil)
        case "min", "max":
            guard let collation = collation(of: arguments[0]) else { return nil }
            return Part(kind: name == "max" ? .maximum : .minimum, call: call, collation: collation)
        default: return nil
        }
    }

    /// The collation SQLite compares `expression` under (as `sqlite3ExprCollSeq` derives it): an
    /// explicit `COLLATE`, else a column's (through `CAST` and unary `+`), else BINARY. Nil when a
    /// `COLLATE` sits deeper inside, where the derivation takes more rules than this one.
    func collation(of expression: Expression) -> String? {
        switch expression {
        case .collate(_, let name):
            return name.name
        case .cast(let operand, _), .unary(.plus, let operand):
            return collation(of: operand)
        case .column(let reference):
            return arms.collations[reference.column.name.lowercased()] ?? "BINARY"
        default:
            var hasCollate = false
            expression.forEachSubexpression { if case .collate = $0 { hasCollate = true } }
            return hasCollate ? nil : "BINARY"
        }
    }

    /// True when `expression` reads the table's row only: its columns (unqualified, or qualified
    /// by the name the query gives the table), literals, `?` parameters and scalar functions; no
    /// subquery, aggregate, window or named parameter.
    func isRowExpression(_ expression: Expression) -> Bool { Self.isRowExpression(expression, exposedName: exposedName) }

    /// `isRowExpression(_:)` for a table the query names `exposedName`.
    static func isRowExpression(_ expression: Expression, exposedName: Identifier) -> Bool {
        var plain = true
        expression.forEachSubexpression { node in
            switch node {
            case .column(let reference):
                if reference.schema != nil { plain = false }
                if let table = reference.table, !SQLName.equal(table.name, exposedName.name) { plain = false }
            case .function(let call):
                if call.over != nil || Self.isAggregate(call) { plain = false }
            default:
                if !Self.isPlain(node, allowingColumns: true, recursive: false) { plain = false }
            }
        }
        return plain
    }

    /// True when `expression` holds no subquery, table reference, `RAISE` or named parameter (and
    /// no column, unless `allowingColumns`); only `expression` itself unless `recursive`.
    static func isPlain(_ expression: Expression, allowingColumns: Bool, recursive: Bool = true) -> Bool {
        func check(_ node: Expression) -> Bool {
            switch node {
            case .exists, .subquery, .raise: return false
            case .in(let value):
                if case .list = value.target { return true }
                return false
            case .parameter(let parameter): return parameter.text.hasPrefix("?")
            case .column: return allowingColumns
            case .function(let call): return call.over == nil
            default: return true
            }
        }
        guard recursive else { return check(expression) }
        var plain = true
        expression.forEachSubexpression { if !check($0) { plain = false } }
        return plain
    }
}
