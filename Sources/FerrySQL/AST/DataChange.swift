/// `[WITH ...] INSERT [OR ...] | REPLACE INTO [schema.]table [AS alias] [(cols)] source [upsert...] [RETURNING ...]`
public struct InsertStatement: Sendable, Hashable {
    /// How the statement begins.
    public enum Verb: Sendable, Hashable {
        /// `INSERT [OR resolution]`
        case insert(ConflictResolution?)
        /// `REPLACE`
        case replace
    }

    /// Where the rows come from.
    public enum Source: Sendable, Hashable {
        /// `VALUES ...` or `SELECT ...` (a VALUES list is a query core).
        case select(SelectStatement)
        /// `DEFAULT VALUES`
        case defaultValues
    }

    /// The `WITH` clause, if any.
    public var with: WithClause?
    /// `INSERT [OR ...]` or `REPLACE`.
    public var verb: Verb
    /// The table.
    public var table: QualifiedName
    /// The alias, if any.
    public var alias: Identifier?
    /// The columns.
    public var columns: [Identifier]?
    /// Where the rows come from.
    public var source: Source
    /// The `ON CONFLICT` clauses, in order.
    public var upserts: [UpsertClause]
    /// The `RETURNING` columns, if any.
    public var returning: [ResultColumn]?
    /// Where the target `[schema.]table` was written.
    public var location: SourceLocation

    /// Creates an INSERT statement.
    public init(with: WithClause? = nil, verb: Verb = .insert(nil), table: QualifiedName, alias: Identifier? = nil,
                columns: [Identifier]? = nil, source: Source, upserts: [UpsertClause] = [], returning: [ResultColumn]? = nil,
                location: SourceLocation = .none) {
        self.with = with
        self.verb = verb
        self.table = table
        self.alias = alias
        self.columns = columns
        self.source = source
        self.upserts = upserts
        self.returning = returning
        self.location = location
    }
}

/// `ON CONFLICT [(target) [WHERE ...]] DO NOTHING | DO UPDATE SET ... [WHERE ...]`
public struct UpsertClause: Sendable, Hashable {
    /// What the upsert does.
    public enum Action: Sendable, Hashable {
        /// `DO NOTHING`
        case nothing
        /// `DO UPDATE SET ... [WHERE ...]`
        case update([Assignment], where: Expression?)
    }

    /// The indexed columns of the conflict target, if written.
    public var target: [OrderingTerm]?
    /// The `WHERE` of the conflict target.
    public var targetWhere: Expression?
    /// What the statement or clause does.
    public var action: Action

    /// Creates an upsert clause.
    public init(target: [OrderingTerm]? = nil, targetWhere: Expression? = nil, action: Action) {
        self.target = target
        self.targetWhere = targetWhere
        self.action = action
    }
}

/// `column = value` or `(c1, c2) = value` in a SET list.
public struct Assignment: Sendable, Hashable {
    /// The assigned columns; more than one, or one in parentheses, for the row-value form.
    public var columns: [Identifier]
    /// Whether the columns were written in parentheses.
    public var parenthesized: Bool
    /// The value.
    public var value: Expression

    /// Creates an assignment.
    public init(columns: [Identifier], parenthesized: Bool? = nil, value: Expression) {
        self.columns = columns
        self.parenthesized = parenthesized ?? (columns.count != 1)
        self.value = value
    }
}

/// `[WITH ...] UPDATE [OR ...] [schema.]table [AS alias] [INDEXED ...] SET ... [FROM ...] [WHERE ...] [RETURNING ...] [ORDER BY ...] [LIMIT ...]`
public struct UpdateStatement: Sendable, Hashable {
    /// The `WITH` clause, if any.
    public var with: WithClause?
    /// The `OR` conflict resolution, if written.
    public var orConflict: ConflictResolution?
    /// The table.
    public var table: TableReference
    /// The `SET` assignments.
    public var assignments: [Assignment]
    /// The FROM clause.
    public var from: JoinClause?
    /// The `WHERE` condition.
    public var `where`: Expression?
    /// The `RETURNING` columns, if any.
    public var returning: [ResultColumn]?
    /// The `ORDER BY` terms.
    public var orderBy: [OrderingTerm]
    /// The limit.
    public var limit: LimitClause?

    /// Creates an UPDATE statement.
    public init(with: WithClause? = nil, orConflict: ConflictResolution? = nil, table: TableReference, assignments: [Assignment],
                from: JoinClause? = nil, where: Expression? = nil, returning: [ResultColumn]? = nil, orderBy: [OrderingTerm] = [],
                limit: LimitClause? = nil) {
        self.with = with
        self.orConflict = orConflict
        self.table = table
        self.assignments = assignments
        self.from = from
        self.where = `where`
        self.returning = returning
        self.orderBy = orderBy
        self.limit = limit
    }
}

/// `[WITH ...] DELETE FROM [schema.]table [AS alias] [INDEXED ...] [WHERE ...] [RETURNING ...] [ORDER BY ...] [LIMIT ...]`
public struct DeleteStatement: Sendable, Hashable {
    /// The `WITH` clause, if any.
    public var with: WithClause?
    /// The table.
    public var table: TableReference
    /// The `WHERE` condition.
    public var `where`: Expression?
    /// The `RETURNING` columns, if any.
    public var returning: [ResultColumn]?
    /// The `ORDER BY` terms.
    public var orderBy: [OrderingTerm]
    /// The limit.
    public var limit: LimitClause?

    /// Creates a DELETE statement.
    public init(with: WithClause? = nil, table: TableReference, where: Expression? = nil, returning: [ResultColumn]? = nil,
                orderBy: [OrderingTerm] = [], limit: LimitClause? = nil) {
        self.with = with
        self.table = table
        self.where = `where`
        self.returning = returning
        self.orderBy = orderBy
        self.limit = limit
    }
}
