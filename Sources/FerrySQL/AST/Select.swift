/// A full query: `[WITH ...] core [compound-op core]... [ORDER BY ...] [LIMIT ...]`.
public struct SelectStatement: Sendable, Hashable {
    /// The `WITH` clause.
    public var with: WithClause?
    /// The first query core.
    public var first: SelectCore
    /// Further cores joined by `UNION`, `INTERSECT`, `EXCEPT`, in order.
    public var compounds: [CompoundTerm]
    /// `ORDER BY` of the whole query.
    public var orderBy: [OrderingTerm]
    /// `LIMIT` of the whole query.
    public var limit: LimitClause?

    /// Creates a query.
    public init(with: WithClause? = nil, first: SelectCore, compounds: [CompoundTerm] = [], orderBy: [OrderingTerm] = [], limit: LimitClause? = nil) {
        self.with = with
        self.first = first
        self.compounds = compounds
        self.orderBy = orderBy
        self.limit = limit
    }
}

/// `WITH [RECURSIVE] cte, ...`
public struct WithClause: Sendable, Hashable {
    /// Whether `RECURSIVE` was written.
    public var recursive: Bool
    /// The common table expressions, in order.
    public var tables: [CommonTableExpression]

    /// Creates a WITH clause.
    public init(recursive: Bool = false, tables: [CommonTableExpression]) {
        self.recursive = recursive
        self.tables = tables
    }
}

/// `[NOT] MATERIALIZED`
public enum Materialization: UInt8, Sendable, Hashable {
    /// `MATERIALIZED` and `NOT MATERIALIZED`.
    case materialized, notMaterialized
}

/// `name [(columns)] AS [[NOT] MATERIALIZED] (select)`
public struct CommonTableExpression: Sendable, Hashable {
    /// The name.
    public var name: Identifier
    /// The column names, if written.
    public var columns: [Identifier]?
    /// `MATERIALIZED` or `NOT MATERIALIZED`, if written.
    public var materialization: Materialization?
    /// The query.
    public var select: SelectStatement
    /// Where the name was written.
    public var location: SourceLocation

    /// Creates a common table expression.
    public init(name: Identifier, columns: [Identifier]? = nil, materialization: Materialization? = nil, select: SelectStatement, location: SourceLocation = .none) {
        self.name = name
        self.columns = columns
        self.materialization = materialization
        self.select = select
        self.location = location
    }
}

/// The compound operators.
public enum CompoundOperator: UInt8, Sendable, Hashable {
    /// `UNION`, `UNION ALL`, `INTERSECT`, `EXCEPT`.
    case union, unionAll, intersect, except

    /// The operator as SQL text.
    public var text: String {
        switch self {
        case .union: return "UNION"
        case .unionAll: return "UNION ALL"
        case .intersect: return "INTERSECT"
        case .except: return "EXCEPT"
        }
    }
}

/// `op core` after the first core of a compound query.
public struct CompoundTerm: Sendable, Hashable {
    /// The operator.
    public var op: CompoundOperator
    /// The query core.
    public var core: SelectCore

    /// Creates a compound term.
    public init(_ op: CompoundOperator, _ core: SelectCore) {
        self.op = op
        self.core = core
    }
}

/// One query core: a `SELECT ...` or a `VALUES ...` list.
public enum SelectCore: Sendable, Hashable {
    /// `SELECT ...`
    case select(SelectClause)
    /// `VALUES (..), (..)`: rows of equal length (at least one row).
    case values([[Expression]])
}

/// `SELECT [DISTINCT|ALL] columns [FROM ...] [WHERE ...] [GROUP BY ...] [HAVING ...] [WINDOW ...]`
public struct SelectClause: Sendable, Hashable {
    /// `DISTINCT` or `ALL`, if written.
    public var quantifier: DistinctMode?
    /// The columns.
    public var columns: [ResultColumn]
    /// The FROM clause.
    public var from: JoinClause?
    /// The `WHERE` condition.
    public var `where`: Expression?
    /// The `GROUP BY` expressions.
    public var groupBy: [Expression]
    /// The `HAVING` condition.
    public var having: Expression?
    /// The `WINDOW` definitions.
    public var windows: [NamedWindow]

    /// Creates a SELECT core.
    public init(quantifier: DistinctMode? = nil, columns: [ResultColumn], from: JoinClause? = nil, where: Expression? = nil,
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
public enum ResultColumn: Sendable, Hashable {
    /// `*`
    case all
    /// `table.*`
    case allColumns(of: Identifier)
    /// `expr [[AS] alias]`
    case expression(Expression, alias: Identifier?)
}

/// `LIMIT limit [OFFSET offset]` or `LIMIT offset, limit`.
public struct LimitClause: Sendable, Hashable {
    /// The limit.
    public var limit: Expression
    /// The offset, if any.
    public var offset: Expression?
    /// Whether it was written `LIMIT offset, limit` (kept so parameters keep their order).
    public var commaForm: Bool

    /// Creates a LIMIT clause.
    public init(limit: Expression, offset: Expression? = nil, commaForm: Bool = false) {
        self.limit = limit
        self.offset = offset
        self.commaForm = commaForm && offset != nil
    }
}

/// A FROM clause (or a parenthesized join): a first item and the joins that follow it.
public struct JoinClause: Sendable, Hashable {
    /// The first item.
    public var first: TableOrSubquery
    /// The items joined to it, in order.
    public var joins: [Join]

    /// Creates a join clause.
    public init(_ first: TableOrSubquery, joins: [Join] = []) {
        self.first = first
        self.joins = joins
    }

    /// Every item of the clause in order (not descending into parenthesized joins).
    public var items: [TableOrSubquery] { [first] + joins.map(\.item) }
}

/// `op item [ON expr | USING (cols)]`
public struct Join: Sendable, Hashable {
    /// The operator.
    public var op: JoinOperator
    /// The joined item.
    public var item: TableOrSubquery
    /// `ON` or `USING`, if written.
    public var constraint: JoinConstraint?

    /// Creates a join step.
    public init(_ op: JoinOperator, _ item: TableOrSubquery, constraint: JoinConstraint? = nil) {
        self.op = op
        self.item = item
        self.constraint = constraint
    }
}

/// The joining operator before an item.
public struct JoinOperator: Sendable, Hashable {
    /// The kinds of join.
    public enum Kind: UInt8, Sendable, Hashable {
        /// `,`
        case comma
        /// `JOIN`
        case plain
        /// `INNER`, `CROSS`, `LEFT [OUTER]`, `RIGHT [OUTER]`, `FULL [OUTER]` before `JOIN`.
        case inner, cross, left, leftOuter, right, rightOuter, full, fullOuter
    }

    /// Whether `NATURAL` was written.
    public var natural: Bool
    /// The kind.
    public var kind: Kind

    /// Creates a join operator.
    public init(natural: Bool = false, _ kind: Kind) {
        self.natural = natural
        self.kind = kind
    }

    /// `,`
    public static let comma = JoinOperator(.comma)
}

/// `ON expr` or `USING (columns)`.
public enum JoinConstraint: Sendable, Hashable {
    /// `ON condition`
    case on(Expression)
    /// `USING (columns)`
    case using([Identifier])
}

/// `INDEXED BY name` or `NOT INDEXED`.
public enum IndexHint: Sendable, Hashable {
    /// `INDEXED BY name`
    case indexedBy(Identifier)
    /// `NOT INDEXED`
    case notIndexed
}

/// One item of a FROM clause.
public indirect enum TableOrSubquery: Sendable, Hashable {
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
public struct TableReference: Sendable, Hashable {
    /// The name.
    public var name: QualifiedName
    /// The alias, if any.
    public var alias: Identifier?
    /// `INDEXED BY` or `NOT INDEXED`, if written.
    public var indexHint: IndexHint?
    /// Where `[schema.]name` was written (without the alias).
    public var location: SourceLocation
    /// Where the index hint was written (`INDEXED BY name` / `NOT INDEXED`), if any.
    public var indexHintLocation: SourceLocation

    /// Creates a table reference.
    public init(_ name: QualifiedName, alias: Identifier? = nil, indexHint: IndexHint? = nil, location: SourceLocation = .none,
                indexHintLocation: SourceLocation = .none) {
        self.name = name
        self.alias = alias
        self.indexHint = indexHint
        self.location = location
        self.indexHintLocation = indexHintLocation
    }
}

/// A table-valued function in a FROM clause.
public struct TableFunctionReference: Sendable, Hashable {
    /// The name.
    public var name: QualifiedName
    /// The arguments.
    public var arguments: [Expression]
    /// The alias, if any.
    public var alias: Identifier?

    /// Creates a table-valued function reference.
    public init(_ name: QualifiedName, arguments: [Expression], alias: Identifier? = nil) {
        self.name = name
        self.arguments = arguments
        self.alias = alias
    }
}
