import FerrySQLite
/// One target column fed by an SQL expression over the source row instead of the source column of
/// the same name: a renamed column (`"full_name"` from `"name"`), a converted one
/// (`"age"` from `"CAST(age_text AS INTEGER)"`), a computed one (`"first || ' ' || last"`).
///
/// The expression follows the rules of a filter (one expression over the source row: no
/// subquery, parameter, comment or `;`) and must compile against the source table. A target column
/// without a feed takes the source column of the same name, or its default.
public struct ColumnFeed: Sendable, Hashable, Codable {
    /// The target column.
    public var column: String
    /// The SQL expression over the source row that gives its value.
    public var expression: String

    /// Feeds `column` from `expression`.
    public init(_ column: String, from expression: String) {
        self.column = column
        self.expression = expression
    }
}
