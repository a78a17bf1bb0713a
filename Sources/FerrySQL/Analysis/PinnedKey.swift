/// The one key a statement pins a table's rows to: its `WHERE` requires `key = value` of the table's
/// rows, where `key` is one of the table's key columns (say, its rowid and the column aliasing it)
/// and `value` a bound parameter or an integer literal.
///
/// A row of the table whose key is not `value` then takes no part in the statement: not in its
/// result, not in what it changes (a join's other side meets it only to be filtered out by the same
/// `WHERE`). Ferry uses this to serve a point statement on a migrating table from the target alone
/// when no pending source row can have that key (see `StatementRedirector`).
///
/// Found only where it can be decided from the text alone:
/// - the table is read (SELECT) or written (UPDATE, DELETE) by exactly one reference in the whole
///   statement (a CTE, subquery or self-join naming it again is not pinned);
/// - a SELECT is a single core (no UNION and the like) whose FROM lists the table itself;
/// - the equality is one of the top-level `AND` terms of that core's (or the write's) `WHERE`, and
///   its column is bound to the table by the analysis (qualified, or the only item in scope).
public enum PinnedKey: Sendable, Hashable {
    /// A bound parameter: the value is the argument bound to it.
    case parameter(Parameter)
    /// An integer literal.
    case integer(Int64)

    /// The key `statement` pins the rows of the listed table `table` (a lower-cased key of
    /// `tables`, as ``TableSet/match(_:)`` gives it) to, if any.
    /// - Parameter keyColumns: the lower-cased names of the table's key columns (a name the table
    ///   has as an ordinary column must not be listed as a rowid spelling).
    public static func find(in statement: Statement, analysis: StatementAnalysis, table: String, tables: TableSet,
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

    /// The key of `key = value` (either way round), when `key` is a key column bound to one of `items`.
    private static func pinnedKey(_ term: Expression, items: Set<Int>, analysis: StatementAnalysis, keyColumns: Set<String>) -> PinnedKey? {
        guard case .binary(let lhs, let terms) = term, terms.count == 1, terms[0].op == .equal || terms[0].op == .doubleEqual else { return nil }
        for (column, value) in [(lhs, terms[0].rhs), (terms[0].rhs, lhs)] {
            guard case .column(let reference) = column, keyColumns.contains(reference.column.name.lowercased()),
                  let range = reference.location.range,
                  let use = analysis.columns.first(where: { $0.reference.location.range == range }),
                  case .item(let item) = use.binding, items.contains(item),
                  let key = operand(value)
            else { continue }
            return key
        }
        return nil
    }

    /// A parameter, or an integer literal that fits 64 bits (decimal or hexadecimal, maybe negated).
    private static func operand(_ expression: Expression) -> PinnedKey? {
        switch expression {
        case .parameter(let parameter):
            return .parameter(parameter)
        case .literal(.integer(let text)):
            return integer(text).map(PinnedKey.integer)
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
