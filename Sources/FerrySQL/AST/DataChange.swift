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

    public var with: WithClause?
    public var verb: Verb
    public var table: QualifiedName
    public var alias: Identifier?
    public var columns: [Identifier]?
    public var source: Source
    public var upserts: [UpsertClause]
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
        case nothing
        case update([Assignment], where: Expression?)
    }

    /// The indexed columns of the conflict target, if written.
    public var target: [OrderingTerm]?
    /// The `WHERE` of the conflict target.
    public var targetWhere: Expression?
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
    public var with: WithClause?
    public var orConflict: ConflictResolution?
    public var table: TableReference
    public var assignments: [Assignment]
    public var from: JoinClause?
    public var `where`: Expression?
    public var returning: [ResultColumn]?
    public var orderBy: [OrderingTerm]
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
    public var with: WithClause?
    public var table: TableReference
    public var `where`: Expression?
    public var returning: [ResultColumn]?
    public var orderBy: [OrderingTerm]
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
