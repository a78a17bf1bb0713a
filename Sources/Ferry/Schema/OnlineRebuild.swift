import FerrySQLite
/// An online rebuild: a schema change SQLite cannot do with ALTER TABLE (change a column's type, add
/// NOT NULL, a CHECK or a foreign key, reorder columns), declared as "a new table shape, fed from the
/// old table", so the app uses the new shape at once while the rows move in the background instead
/// of blocking a launch on a 12-step rebuild.
///
/// Register it with `SchemaMigrator.registerOnlineRebuild(_:_:)`. The migrator checksums the
/// declaration, records the migration like any other, and hands the rebuild to its executor inside
/// the migration's transaction; the default, `FerryRebuildExecutor`, turns it into a same-file data
/// migration that `FerryDatabase` carries out (see Docs/SchemaMigrations.md for what the app sees
/// while rows are still moving).
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
    /// Old columns the new shape deliberately does not keep (the rebuild is refused when an old
    /// column reaches no new column and is not listed here).
    public var droppedColumns: [String]

    /// One column of the new shape and the expression over the old row that feeds it.
    public typealias ColumnFeed = Ferry.ColumnFeed

    /// Describes the rebuild of `table` into the shape `newDefinition` (its column and constraint
    /// list), fed column by column from the old rows that match `filter`.
    public init(table: String, newDefinition: String, columnMapping: [ColumnFeed], filter: String? = nil, droppedColumns: [String] = []) {
        self.table = table
        self.newDefinition = newDefinition
        self.columnMapping = columnMapping
        self.filter = filter
        self.droppedColumns = droppedColumns
    }

    /// The canonical text the migration checksum covers.
    var canonicalText: String {
        func field(_ text: String) -> String { "\(text.utf8.count):\(text)" }
        return "onlineRebuild " + field(table) + field(SQLNormalizer.normalize(newDefinition))
            + field(String(columnMapping.count))
            + columnMapping.map { field($0.column) + field(SQLNormalizer.normalize($0.expression)) }.joined()
            + (filter.map { "W" + field(SQLNormalizer.normalize($0)) } ?? "-")
            + (droppedColumns.isEmpty ? "" : "D" + droppedColumns.map(field).joined())
    }
}

/// Carries out online rebuilds. `FerryRebuildExecutor` is Ferry's; tests may substitute their own.
public protocol OnlineRebuildExecutor: Sendable {
    /// Carries out (or starts) the rebuild. Called on the writer connection, inside the migration's
    /// transaction; throwing rolls the migration back.
    func run(_ rebuild: OnlineRebuild, on db: MigrationConnection) throws
}
