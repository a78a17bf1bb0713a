/// `[WITH ...] INSERT [OR ...] | REPLACE INTO [schema.]table [AS alias] [(cols)] source [upsert...] [RETURNING ...]`
package struct InsertStatement: Sendable, Hashable {
    /// How the statement begins.
    package enum Verb: Sendable, Hashable {
        /// `INSERT [OR resolution]`
        case insert(ConflictResolution?)
        /// `REPLACE`
        case replace
    }

    /// Where the rows come from.
    package enum Source: Sendable, Hashable {
        /// `VALUES ...` or `SELECT ...` (a VALUES list is a query core).
        case select(SelectStatement)
        /// `DEFAULT VALUES`
        case defaultValues
    }

    /// The `WITH` clause, if any.
    package var with: WithClause?
    /// `INSERT [OR ...]` or `REPLACE`.
    package var verb: Verb
    /// The table.
    package var table: QualifiedName
    /// The alias, if any.
    package var alias: Identifier?
    /// The columns.
    package var columns: [Identifier]?
    /// Where the rows come from.
    package var source: Source
    /// The `ON CONFLICT` clauses, in order.
    package var upserts: [UpsertClause]
    /// The `RETURNING` columns, if any.
    package var returning: [ResultColumn]?
    /// Where the target `[schema.]table` was written.
    package var location: SourceLocation

    /// Creates an INSERT statement.
    package init(with: WithClause? = nil, verb: Verb = .insert(nil), table: QualifiedName, alias: Identifier? = nil,
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
package struct UpsertClause: Sendable, Hashable {
    /// What the upsert does.
    package enum Action: Sendable, Hashable {
        /// `DO NOTHING`
        case nothing
        /// `DO UPDATE SET ... [WHERE ...]`
        case update([Assignment], where: Expression?)
    }

    /// The indexed columns of the conflict target, if written.
    package var target: [OrderingTerm]?
    /// The `WHERE` of the conflict target.
    package var targetWhere: Expression?
    /// What the statement or clause does.
    package var action: Action

    /// Creates an upsert clause.
    package init(target: [OrderingTerm]? = nil, targetWhere: Expression? = nil, action: Action) {
        self.target = target
        self.targetWhere = targetWhere
        self.action = action
    }
}

/// `column = value` or `(c1, c2) = value` in a SET list.
package struct Assignment: Sendable, Hashable {
    /// The assigned columns; more than one, or one in parentheses, for the row-value form.
    package var columns: [Identifier]
    /// Whether the columns were written in parentheses.
    package var parenthesized: Bool
    /// The value.
    package var value: Expression

    /// Creates an assignment.
    package init(columns: [Identifier], parenthesized: Bool? = nil, value: Expression) {
        self.columns = columns
        self.parenthesized = parenthesized ?? (columns.count != 1)
        self.value = value
    }
}

/// `[WITH ...] UPDATE [OR ...] [schema.]table [AS alias] [INDEXED ...] SET ... [FROM ...] [WHERE ...] [RETURNING ...] [ORDER BY ...] [LIMIT ...]`
package struct UpdateStatement: Sendable, Hashable {
    /// The `WITH` clause, if any.
    package var with: WithClause?
    /// The `OR` conflict resolution, if written.
    package var orConflict: ConflictResolution?
    /// The table.
    package var table: TableReference
    /// The `SET` assignments.
    package var assignments: [Assignment]
    /// The FROM clause.
    package var from: JoinClause?
    /// The `WHERE` condition.
    package var `where`: Expression?
    /// The `RETURNING` columns, if any.
    package var returning: [ResultColumn]?
    /// The `ORDER BY` terms.
    package var orderBy: [OrderingTerm]
    /// The limit.
    package var limit: LimitClause?

    /// Creates an UPDATE statement.
    package init(with: WithClause? = nil, orConflict: ConflictResolution? = nil, table: TableReference, assignments: [Assignment],
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
package struct DeleteStatement: Sendable, Hashable {
    /// The `WITH` clause, if any.
    package var with: WithClause?
    /// The table.
    package var table: TableReference
    /// The `WHERE` condition.
    package var `where`: Expression?
    /// The `RETURNING` columns, if any.
    package var returning: [ResultColumn]?
    /// The `ORDER BY` terms.
    package var orderBy: [OrderingTerm]
    /// The limit.
    package var limit: LimitClause?

    /// Creates a DELETE statement.
    package init(with: WithClause? = nil, table: TableReference, where: Expression? = nil, returning: [ResultColumn]? = nil,
                orderBy: [OrderingTerm] = [], limit: LimitClause? = nil) {
        self.with = with
        self.table = table
        self.where = `where`
        self.returning = returning
        self.orderBy = orderBy
        self.limit = limit
    }
}
