/// Where an expression result column (`expr [AS alias]` of a SELECT or RETURNING) stands in the
/// source text, as ``Parser/parseStatementWithResultColumns(source:tokens:options:)`` reports it.
///
/// SQLite names an unaliased result column after the column it references, or else after the
/// exact text of its expression: a rewrite that edits text inside that span must alias the column
/// with its original text to keep its name.
public struct ResultColumnSpan: Sendable, Hashable {
    /// The UTF-8 byte range of the expression (alias excluded).
    public var range: Range<Int>
    /// True when the column has an alias (`AS x` or a bare name).
    public var hasAlias: Bool
    /// The column reference, when the whole expression is one (`a`, `t.a`, `(a)`).
    public var columnReference: ColumnReference?

    /// Creates a span.
    public init(range: Range<Int>, hasAlias: Bool, columnReference: ColumnReference? = nil) {
        self.range = range
        self.hasAlias = hasAlias
        self.columnReference = columnReference
    }
}
