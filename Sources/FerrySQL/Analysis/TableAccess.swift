/// How a statement uses a table it names.
package enum TableAccessKind: Sendable, Hashable {
    /// Rows are read (FROM, joins, subqueries, `IN table`, CTE bodies, UPDATE ... FROM, INSERT ... SELECT).
    case read
    /// The target of INSERT (or INSERT OR REPLACE / REPLACE, and its UPSERT clauses).
    case insert
    /// The target of UPDATE.
    case update
    /// The target of DELETE.
    case delete
    /// An object that a schema statement creates, drops, alters, indexes or puts a trigger on.
    case schema
    /// An object named by ANALYZE, REINDEX or similar maintenance statements.
    case maintenance

    /// Whether the access changes rows.
    package var isWrite: Bool { self == .insert || self == .update || self == .delete }
}

/// What a table name in a statement refers to.
package enum TableResolution: Sendable, Hashable {
    /// A table or view of the database (schema-qualified or not).
    case table
    /// A common table expression of an enclosing WITH clause, which shadows any table of that name.
    case commonTableExpression
}

/// Where in a statement a table name appears.
package enum TableContext: Sendable, Hashable {
    /// A FROM item (also joins, subqueries, CTE bodies, UPDATE ... FROM).
    case from
    /// The right side of `x IN table`.
    case inOperator
    /// The target of INSERT, UPDATE or DELETE.
    case target
    /// A statement inside a trigger body.
    case triggerBody
    /// An object named by a schema or maintenance statement.
    case schemaObject
}

/// One table name in a statement, with how it is used and what it refers to.
package struct TableAccess: Sendable, Hashable {
    /// The name as written.
    package var name: QualifiedName
    /// The alias given to it, if any.
    package var alias: Identifier?
    /// How the statement uses it.
    package var kind: TableAccessKind
    /// Whether it is a real table or a CTE.
    package var resolution: TableResolution
    /// Where it appears.
    package var context: TableContext
    /// `INDEXED BY name` / `NOT INDEXED`, if written.
    package var indexHint: IndexHint?
    /// Where `[schema.]name` was written in the source (nil for nodes built in code).
    package var location: SourceLocation
    /// Where the index hint was written, if any.
    package var indexHintLocation: SourceLocation = .none

    /// Whether it carries `INDEXED BY` / `NOT INDEXED`.
    package var hasIndexHint: Bool { indexHint != nil }

    /// The name columns use to refer to it: the alias, or the table's name.
    package var exposedName: Identifier { alias ?? name.name }
}

/// What a column reference binds to, as far as can be decided from the text alone.
package enum ColumnBinding: Sendable, Hashable {
    /// A FROM item (index into ``StatementAnalysis/fromItems``), by its qualifier or because it is the only item
    /// in scope.
    case item(Int)
    /// One of several FROM items (an unqualified name with several items in scope).
    case candidates([Int])
    /// `NEW.x` or `OLD.x` in a trigger.
    case triggerRow(Identifier)
    /// `excluded.x` in an UPSERT.
    case excluded
    /// Nothing in scope matches (a result-column alias, an outer query's name that is not visible, or an error).
    case unresolved
}

/// A FROM item (or statement target) that columns can bind to.
package struct FromItem: Sendable, Hashable {
    /// The name columns use for it (alias or table name); nil for an unaliased subquery or join.
    package var exposedName: Identifier?
    /// The index of the table in ``StatementAnalysis/tables``, for named tables.
    package var table: Int?
    /// The scope (SELECT core or statement) it belongs to; scopes nest.
    package var scope: Int
}

/// One column reference and what it binds to.
package struct ColumnUse: Sendable, Hashable {
    /// The column reference as written.
    package var reference: ColumnReference
    /// What it binds to.
    package var binding: ColumnBinding
}
