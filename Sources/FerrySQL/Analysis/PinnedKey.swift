/// The keys a statement pins a table's rows to: its `WHERE` requires `key = v`, `key IN (v1, v2,
/// …)`, `key <= v`, `key < v` or `key BETWEEN u AND v` of the table's rows, where `key` is one of
/// the table's key columns (say, its rowid and the column aliasing it) and each value a bound
/// parameter or an integer literal.
///
/// A row of the table whose key lies outside then takes no part in the statement: not in its
/// result, not in what it changes (a join's other side meets it only to be filtered out by the same
/// `WHERE`). Ferry uses this to serve a statement on a migrating table from the target alone when
/// no pending source row can have such a key (see `StatementRedirector`).
///
/// Found only where it can be decided from the text alone:
/// - the table is read (SELECT) or written (UPDATE, DELETE) by exactly one reference in the whole
///   statement (a CTE, subquery or self-join naming it again is not pinned);
/// - a SELECT is a single core (no UNION and the like) whose FROM lists the table itself;
/// - the comparison is one of the top-level `AND` terms of that core's (or the write's) `WHERE`,
///   and its column is bound to the table by the analysis (qualified, or the only item in scope).
package struct PinnedKey: Sendable, Hashable {
    /// A value the key is compared with.
    package enum Operand: Sendable, Hashable {
        /// A bound parameter: the value is the argument bound to it.
        case parameter(Parameter)
        /// An integer literal.
        case integer(Int64)
    }

    /// How the rows' keys relate to the operands.
    package enum Relation: Sendable, Hashable {
        /// `key = v` or `key IN (v1, v2, …)`: the key is one of the operands.
        case oneOf
        /// `key <= v` (or `v >= key`, or `key BETWEEN u AND v`): at most the operand.
        case atMost
        /// `key < v` (or `v > key`): below the operand.
        case below
    }

    /// How the keys relate to the operands.
    package var relation: Relation
    /// The operands (one, except for `IN`).
    package var operands: [Operand]

    /// Creates a pinned key.
    package init(_ relation: Relation, _ operands: [Operand]) {
        self.relation = relation
        self.operands = operands
    }

    /// The largest key a row may have, with `value` giving each operand's value (asked in order,
    /// without building an array: this runs before every statement that pins a key); nil when an
    /// operand has no value (every key is then possible, as far as the caller knows).
    package func largestKey(valueOf value: (Operand) -> Int64?) -> Int64? {
        guard let first = operands.first, let firstValue = value(first) else { return nil }
        switch relation {
        case .oneOf:
            var largest = firstValue
            for operand in operands.dropFirst() {
                guard let next = value(operand) else { return nil }
                largest = max(largest, next)
            }
            return largest
        case .atMost: return firstValue
        case .below: return firstValue == .min ? .min : firstValue - 1  // `key < min` holds for no row
        }
    }

    /// The keys `statement` pins the rows of the listed table `table` (a lower-cased key of
    /// `tables`, as ``TableSet/match(_:)`` gives it) to, if any.
    /// - Parameter keyColumns: the lower-cased names of the table's key columns (a name the table
    ///   has as an ordinary column must not be listed as a rowid spelling).
    package static func find(in statement: Statement, analysis: StatementAnalysis, table: String, tables: TableSet,
                            keyColumns: Set<String>) -> PinnedKey? {
        let references = analysis.tables.indices.filter {
            analysis.tables[$0].resolution == .table && tables.match(analysis.tables[$0].name) == table
        }
        guard references.count == 1, let index = references.first, let range = analysis.tables[index].location.range else { return nil }
        let access = analysis.tables[index]
        let condition: Expression?
        switch statement {
        case .select(let select):
            guard access.kind == .read, select.compounds.isEmpty, case .select(let clause) = select.first,
                  let from = clause.from, from.items.contains(where: { item in
                      if case .table(let reference) = item { return reference.location.range == range }
                      return false
                  })
            else { return nil }
            condition = clause.where
        case .update(let update):
            guard access.kind == .update, update.table.location.range == range else { return nil }
            condition = update.where
        case .delete(let delete):
            guard access.kind == .delete, delete.table.location.range == range else { return nil }
            condition = delete.where
        default:
            return nil
        }
        guard let condition else { return nil }
        let items = Set(analysis.fromItems.indices.filter { analysis.fromItems[$0].table == index })
        for term in conjuncts(condition) {
            if let key = pinnedKey(term, items: items, analysis: analysis, keyColumns: keyColumns) { return key }
        }
        return nil
    }

    /// The top-level `AND` terms of a condition.
    private static func conjuncts(_ expression: Expression) -> [Expression] {
        guard case .binary(let first, let terms) = expression, terms.allSatisfy({ $0.op == .and }) else { return [expression] }
        return conjuncts(first) + terms.flatMap { conjuncts($0.rhs) }
    }

    /// The keys a comparison term pins the rows to, when its column is a key column bound to one
    /// of `items`.
    private static func pinnedKey(_ term: Expression, items: Set<Int>, analysis: StatementAnalysis, keyColumns: Set<String>) -> PinnedKey? {
        func isKey(_ expression: Expression) -> Bool {
            guard case .column(let reference) = expression, keyColumns.contains(reference.column.name.lowercased()),
                  let range = reference.location.range,
                  let use = analysis.columns.first(where: { $0.reference.location.range == range }),
                  case .item(let item) = use.binding
            else { return false }
            return items.contains(item)
        }
        switch term {
        case .binary(let lhs, let terms) where terms.count == 1:
            let (op, rhs) = (terms[0].op, terms[0].rhs)
            if isKey(lhs), let value = operand(rhs), let relation = upperBound(op, keyOnLeft: true) { return PinnedKey(relation, [value]) }
            if isKey(rhs), let value = operand(lhs), let relation = upperBound(op, keyOnLeft: false) { return PinnedKey(relation, [value]) }
            return nil
        case .between(let between) where !between.negated && isKey(between.value):
            return operand(between.upper).map { PinnedKey(.atMost, [$0]) }
        case .in(let membership) where !membership.negated && isKey(membership.value):
            guard case .list(let list) = membership.target, !list.isEmpty else { return nil }
            let operands = list.compactMap(operand)
            return operands.count == list.count ? PinnedKey(.oneOf, operands) : nil
        default:
            return nil
        }
    }

    /// The relation `key op v` (or, with the key on the right, `v op key`) bounds the key from above
    /// by; nil when it gives no upper bound.
    private static func upperBound(_ op: BinaryOperator, keyOnLeft: Bool) -> Relation? {
        switch (op, keyOnLeft) {
        case (.equal, _), (.doubleEqual, _): return .oneOf
        case (.lessEqual, true), (.greaterEqual, false): return .atMost
        case (.less, true), (.greater, false): return .below
        default: return nil
        }
    }

    /// A parameter, or an integer literal that fits 64 bits (decimal or hexadecimal, maybe negated).
    private static func operand(_ expression: Expression) -> Operand? {
        switch expression {
        case .parameter(let parameter):
            return .parameter(parameter)
        case .literal(.integer(let text)):
            return integer(text).map(Operand.integer)
        case .unary(.negate, .literal(.integer(let text))):
            return integer(text).flatMap { $0 == .min ? nil : .integer(-$0) }
        default:
            return nil
        }
    }

    private static func integer(_ text: String) -> Int64? {
        if text.hasPrefix("0x") || text.hasPrefix("0X") {
            // SQLite reads a hexadecimal literal as the 64 bits it spells (0xFFFFFFFFFFFFFFFF is -1).
            return UInt64(text.dropFirst(2), radix: 16).map { Int64(bitPattern: $0) }
        }
        return Int64(text)
    }
}
