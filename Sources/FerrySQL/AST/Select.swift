/// A full query: `[WITH ...] core [compound-op core]... [ORDER BY ...] [LIMIT ...]`.
package struct SelectStatement: Sendable, Hashable {
    /// The `WITH` clause.
    package var with: WithClause?
    /// The first query core.
    package var first: SelectCore
    /// Further cores joined by `UNION`, `INTERSECT`, `EXCEPT`, in order.
    package var compounds: [CompoundTerm]
    /// `ORDER BY` of the whole query.
    package var orderBy: [OrderingTerm]
    /// `LIMIT` of the whole query.
    package var limit: LimitClause?

    /// Creates a query.
    package init(with: WithClause? = nil, first: SelectCore, compounds: [CompoundTerm] = [], orderBy: [OrderingTerm] = [], limit: LimitClause? = nil) {
        self.with = with
        self.first = first
        self.compounds = compounds
        self.orderBy = orderBy
        self.limit = limit
    }
}

/// `WITH [RECURSIVE] cte, ...`
package struct WithClause: Sendable, Hashable {
    /// Whether `RECURSIVE` was written.
    package var recursive: Bool
    /// The common table expressions, in order.
    package var tables: [CommonTableExpression]

    /// Creates a WITH clause.
    package init(recursive: Bool = false, tables: [CommonTableExpression]) {
        self.recursive = recursive
        self.tables = tables
    }
}

/// `[NOT] MATERIALIZED`
package enum Materialization: UInt8, Sendable, Hashable {
    /// `MATERIALIZED` and `NOT MATERIALIZED`.
    case materialized, notMaterialized
}

/// `name [(columns)] AS [[NOT] MATERIALIZED] (select)`
package struct CommonTableExpression: Sendable, Hashable {
    /// The name.
    package var name: Identifier
    /// The column names, if written.
    package var columns: [Identifier]?
    /// `MATERIALIZED` or `NOT MATERIALIZED`, if written.
    package var materialization: Materialization?
    /// The query.
    package var select: SelectStatement
    /// Where the name was written.
    package var location: SourceLocation

    /// Creates a common table expression.
    package init(name: Identifier, columns: [Identifier]? = nil, materialization: Materialization? = nil, select: SelectStatement, location: SourceLocation = .none) {
        self.name = name
        self.columns = columns
        self.materialization = materialization
        self.select = select
        self.location = location
    }
}

/// The compound operators.
package enum CompoundOperator: UInt8, Sendable, Hashable {
    /// `UNION`, `UNION ALL`, `INTERSECT`, `EXCEPT`.
    case union, unionAll, intersect, except

    /// The operator as SQL text.
    package var text: String {
        switch self {
        case .union: return "UNION"
        case .unionAll: return "UNION ALL"
        case .intersect: return "INTERSECT"
        case .except: return "EXCEPT"
        }
    }
}

/// `op core` after the first core of a compound query.
package struct CompoundTerm: Sendable, Hashable {
    /// The operator.
    package var op: CompoundOperator
    /// The query core.
    package var core: SelectCore

    /// Creates a compound term.
    package init(_ op: CompoundOperator, _ core: SelectCore) {
        self.op = op
        self.core = core
    }
}

/// One query core: a `SELECT ...` or a `VALUES ...` list.
package enum SelectCore: Sendable, Hashable {
    /// `SELECT ...`
    case select(SelectClause)
    /// `VALUES (..), (..)`: rows of equal length (at least one row).
    case values([[Expression]])
}

/// `SELECT [DISTINCT|ALL] columns [FROM ...] [WHERE ...] [GROUP BY ...] [HAVING ...] [WINDOW ...]`
package struct SelectClause: Sendable, Hashable {
    /// `DISTINCT` or `ALL`, if written.
    package var quantifier: DistinctMode?
    /// The columns.
    package var columns: [ResultColumn]
    /// The FROM clause.
    package var from: JoinClause?
    /// The `WHERE` condition.
    package var `where`: Expression?
    /// The `GROUP BY` expressions.
    package var groupBy: [Expression]
    /// The `HAVING` condition.
    package var having: Expression?
    /// The `WINDOW` definitions.
    package var windows: [NamedWindow]

    /// Creates a SELECT core.
    package init(quantifier: DistinctMode? = nil, columns: [ResultColumn], from: JoinClause? = nil, where: Expression? = nil,
                groupBy: [Expression] = [], having: Expression? = nil, windows: [NamedWindow] = []) {
        self.quantifier = quantifier
        self.columns = columns
        self.from = from
        self.where = `where`
        self.groupBy = groupBy
        self.having = having
        self.windows = windows
    }
}

/// One result column (also used by `RETURNING`).
package enum ResultColumn: Sendable, Hashable {
    /// `*`
    case all
    /// `table.*`
    case allColumns(of: Identifier)
    /// `expr [[AS] alias]`
    case expression(Expression, alias: Identifier?)
}

/// `LIMIT limit [OFFSET offset]` or `LIMIT offset, limit`.
package struct LimitClause: Sendable, Hashable {
    /// The limit.
    package var limit: Expression
    /// The offset, if any.
    package var offset: Expression?
    /// Whether it was written `LIMIT offset, limit` (kept so parameters keep their order).
    package var commaForm: Bool

    /// Creates a LIMIT clause.
    package init(limit: Expression, offset: Expression? = nil, commaForm: Bool = false) {
        self.limit = limit
        self.offset = offset
        self.commaForm = commaForm && offset != nil
    }
}

/// A FROM clause (or a parenthesized join): a first item and the joins that follow it.
package struct JoinClause: Sendable, Hashable {
    /// The first item.
    package var first: TableOrSubquery
    /// The items joined to it, in order.
    package var joins: [Join]

    /// Creates a join clause.
    package init(_ first: TableOrSubquery, joins: [Join] = []) {
        self.first = first
        self.joins = joins
    }

    /// Every item of the clause in order (not descending into parenthesized joins).
    package var items: [TableOrSubquery] { [first] + joins.map(\.item) }
}

/// `op item [ON expr | USING (cols)]`
package struct Join: Sendable, Hashable {
    /// The operator.
    package var op: JoinOperator
    /// The joined item.
    package var item: TableOrSubquery
    /// `ON` or `USING`, if written.
    package var constraint: JoinConstraint?

    /// Creates a join step.
    package init(_ op: JoinOperator, _ item: TableOrSubquery, constraint: JoinConstraint? = nil) {
        self.op = op
        self.item = item
        self.constraint = constraint
    }
}

/// The joining operator before an item.
package struct JoinOperator: Sendable, Hashable {
    /// The kinds of join.
    package enum Kind: UInt8, Sendable, Hashable {
        /// `,`
        case comma
        /// `JOIN`
        case plain
        /// `INNER`, `CROSS`, `LEFT [OUTER]`, `RIGHT [OUTER]`, `FULL [OUTER]` before `JOIN`.
        case inner, cross, left, leftOuter, right, rightOuter, full, fullOuter
    }

    /// Whether `NATURAL` was written.
    package var natural: Bool
    /// The kind.
    package var kind: Kind

    /// Creates a join operator.
    package init(natural: Bool = false, _ kind: Kind) {
        self.natural = natural
        self.kind = kind
    }

    /// `,`
    package static let comma = JoinOperator(.comma)
}

/// `ON expr` or `USING (columns)`.
package enum JoinConstraint: Sendable, Hashable {
    /// `ON condition`
    case on(Expression)
    /// `USING (columns)`
    case using([Identifier])
}

/// `INDEXED BY name` or `NOT INDEXED`.
package enum IndexHint: Sendable, Hashable {
    /// `INDEXED BY name`
    case indexedBy(Identifier)
    /// `NOT INDEXED`
    case notIndexed
}

/// One item of a FROM clause.
package indirect enum TableOrSubquery: Sendable, Hashable {
    /// `[schema.]table [[AS] alias] [INDEXED BY ... | NOT INDEXED]`
    case table(TableReference)
    /// `[schema.]function(args) [[AS] alias]`
    case tableFunction(TableFunctionReference)
    /// `(select) [[AS] alias]`
    case subquery(SelectStatement, alias: Identifier?)
    /// `(join-clause) [[AS] alias]`
    case join(JoinClause, alias: Identifier?)
}

/// A named table (or view, or CTE) in a FROM clause or as a statement's target.
package struct TableReference: Sendable, Hashable {
    /// The name.
    package var name: QualifiedName
    /// The alias, if any.
    package var alias: Identifier?
    /// `INDEXED BY` or `NOT INDEXED`, if written.
    package var indexHint: IndexHint?
    /// Where `[schema.]name` was written (without the alias).
    package var location: SourceLocation
    /// Where the index hint was written (`INDEXED BY name` / `NOT INDEXED`), if any.
    package var indexHintLocation: SourceLocation

    /// Creates a table reference.
    package init(_ name: QualifiedName, alias: Identifier? = nil, indexHint: IndexHint? = nil, location: SourceLocation = .none,
                indexHintLocation: SourceLocation = .none) {
        self.name = name
        self.alias = alias
        self.indexHint = indexHint
        self.location = location
        self.indexHintLocation = indexHintLocation
    }
}

/// A table-valued function in a FROM clause.
package struct TableFunctionReference: Sendable, Hashable {
    /// The name.
    package var name: QualifiedName
    /// The arguments.
    package var arguments: [Expression]
    /// The alias, if any.
    package var alias: Identifier?

    /// Creates a table-valued function reference.
    package init(_ name: QualifiedName, arguments: [Expression], alias: Identifier? = nil) {
        self.name = name
        self.arguments = arguments
        self.alias = alias
    }
}
