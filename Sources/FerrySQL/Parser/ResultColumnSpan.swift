/// Where an expression result column (`expr [AS alias]` of a SELECT or RETURNING) stands in the
/// source text, as ``Parser/parseStatementWithResultColumns(source:tokens:options:)`` reports it.
///
/// SQLite names an unaliased result column after the column it references, or else after the
/// exact text of its expression: a rewrite that edits text inside that span must alias the column
/// with its original text to keep its name.
package struct ResultColumnSpan: Sendable, Hashable {
    /// The UTF-8 byte range of the expression (alias excluded).
    package var range: Range<Int>
    /// True when the column has an alias (`AS x` or a bare name).
    package var hasAlias: Bool
    /// The column reference, when the whole expression is one (`a`, `t.a`, `(a)`).
    package var columnReference: ColumnReference?

    /// Creates a span.
    package init(range: Range<Int>, hasAlias: Bool, columnReference: ColumnReference? = nil) {
        self.range = range
        self.hasAlias = hasAlias
        self.columnReference = columnReference
    }
}

/// Where a `*` or `table.*` result column stands, with the FROM items it expands to: what a
/// rewrite needs when a replaced table would show more columns than the original (it then
/// spells the star out).
package struct StarColumnSpan: Sendable, Hashable {
    /// The UTF-8 byte range of `*` or `table.*`.
    package var range: Range<Int>
    /// The `table` of `table.*`; nil for a bare `*`.
    package var table: Identifier?
    /// The FROM items of the star's SELECT, in order (parenthesized joins without an alias spelled
    /// out); empty for RETURNING and SELECTs without FROM.
    package var fromItems: [StarFromItem]
    /// True when that FROM joins by name (`NATURAL` or `USING`): `*` then shows a shared column once.
    package var joinsByName: Bool

    /// Creates a span.
    package init(range: Range<Int>, table: Identifier?, fromItems: [StarFromItem] = [], joinsByName: Bool = false) {
        self.range = range
        self.table = table
        self.fromItems = fromItems
        self.joinsByName = joinsByName
    }
}

/// One FROM item as a star sees it.
package struct StarFromItem: Sendable, Hashable {
    /// The name its columns are qualified with (alias or table name); nil for an unaliased subquery
    /// or table function.
    package var exposedName: Identifier?
    /// Where the table's name was written, when the item is a named table (matches
    /// ``TableAccess/location``); `.none` otherwise.
    package var tableLocation: SourceLocation
    /// Where the names of the tables inside the item were written (a subquery's own tables are
    /// not listed: its stars are spans of their own); for an aliased parenthesized join, every table in it.
    package var nestedTableLocations: [SourceLocation]

    /// Creates an item.
    package init(exposedName: Identifier?, tableLocation: SourceLocation = .none, nestedTableLocations: [SourceLocation] = []) {
        self.exposedName = exposedName
        self.tableLocation = tableLocation
        self.nestedTableLocations = nestedTableLocations
    }
}
