/// Extension point for online rebuilds: a schema change declared as "a new table shape, fed from the
/// old table" and carried out by a data-migration engine (batched copy, change capture, cut-over)
/// instead of inside the migration's transaction.
///
/// Ferry ships no executor for it yet (the natural one is a same-file `FerryDatabase` migration
/// into the new shape, still to be wired up): an app registers one with `SchemaMigrator.registerOnlineRebuild(_:_:executor:)`. The
/// migrator checksums the declaration, records the migration like any other, and hands the
/// rebuild to the executor inside the migration's transaction. An executor that copies in the
/// background would record its progress in its own tables and report completion itself.
public struct OnlineRebuild: Sendable, Hashable {
    /// The table being rebuilt (it keeps its name once the rebuild completes).
    public var table: String
    /// The new table's definition: the column and constraint list, as in `CREATE TABLE t (...)`.
    public var newDefinition: String
    /// For each column of the new shape, the SQL expression over the old table's columns that
    /// feeds it (e.g. `["id": "id", "fullName": "first || ' ' || last"]`), in column order.
    public var columnMapping: [ColumnFeed]
    /// Rows of the old table to carry over (nil: all).
    public var filter: String?

    /// One column of the new shape and the expression over the old row that feeds it.
    public struct ColumnFeed: Sendable, Hashable {
        /// The column of the new table.
        public var column: String
        /// The SQL expression over the old row that gives its value.
        public var expression: String
        /// Feeds `column` from `expression`.
        public init(_ column: String, from expression: String) {
            self.column = column
            self.expression = expression
        }
    }

    /// Describes the rebuild of `table` into the shape `newDefinition` (its column and constraint
    /// list), fed column by column from the old rows that match `filter`.
    public init(table: String, newDefinition: String, columnMapping: [ColumnFeed], filter: String? = nil) {
        self.table = table
        self.newDefinition = newDefinition
        self.columnMapping = columnMapping
        self.filter = filter
    }

    /// The canonical text the migration checksum covers.
    var canonicalText: String {
        func field(_ text: String) -> String { "\(text.utf8.count):\(text)" }
        return "onlineRebuild " + field(table) + field(SQLNormalizer.normalize(newDefinition))
            + field(String(columnMapping.count))
            + columnMapping.map { field($0.column) + field(SQLNormalizer.normalize($0.expression)) }.joined()
            + (filter.map { "W" + field(SQLNormalizer.normalize($0)) } ?? "-")
    }
}

/// Carries out online rebuilds. Implemented by the data-migration engine (not part of Ferry yet).
public protocol OnlineRebuildExecutor: Sendable {
    /// Carries out (or starts) the rebuild. Called on the writer connection, inside the migration's
    /// transaction; throwing rolls the migration back.
    func run(_ rebuild: OnlineRebuild, on db: Connection) throws
}
