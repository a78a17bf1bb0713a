import FerrySQLite

/// A row whose foreign key has no parent row, as `PRAGMA foreign_key_check` reports it, with the
/// key's columns and the row's values.
public struct ForeignKeyViolation: Sendable, Hashable {
    /// The child table.
    public let table: String
    /// The child row's rowid (nil in a `WITHOUT ROWID` table).
    public let rowid: Int64?
    /// The child's key columns.
    public let columns: [String]
    /// The parent table.
    public let parentTable: String
    /// The parent's key columns (its primary key when the reference names none).
    public let parentColumns: [String]
    /// The child row's values (nil when it cannot be read back: a `WITHOUT ROWID` table).
    public let row: Row?

    /// The violation as the error a failed check throws.
    public var error: FerryError {
        var rowText = "an unidentified row (WITHOUT ROWID table)"
        if let rowid {
            rowText = "rowid \(rowid)"
            if let row { rowText += " [" + zip(row.columnNames, row.values).map { "\($0):\($1)" }.joined(separator: " ") + "]" }
        }
        return .foreignKeyViolation(table: table, columns: columns, parentTable: parentTable, parentColumns: parentColumns, row: rowText)
    }

    /// The violations of `main` (or of `table` alone), read with `fetch`, which runs a statement:
    /// on the app's handle it goes through Ferry's rewrite, so a migrating table's pending rows
    /// count as on the finished table.
    static func list(in table: String?, fetch: (String, StatementArguments) throws(FerryError) -> [Row]) throws(FerryError) -> [ForeignKeyViolation] {
        let pragma = table.map { "PRAGMA main.foreign_key_check(\(sqlString($0)))" } ?? "PRAGMA main.foreign_key_check"
        var result: [ForeignKeyViolation] = []
        for violation in try fetch(pragma, .none) {
            // Columns: table, rowid (NULL for WITHOUT ROWID tables), parent, fkid.
            let child: String = try sqlite(violation.column(0))
            let rowid = try sqlite(violation.column(1, as: Int64?.self))
            let parent: String = try sqlite(violation.column(2))
            let id: Int = try sqlite(violation.column(3))
            var columns: [String] = []
            var parentColumns: [String] = []
            let references = try fetch("SELECT \"from\", \"to\" FROM pragma_foreign_key_list(?1, 'main') WHERE id = ?2 ORDER BY seq",
                                       [.text(child), .integer(Int64(id))])
            for reference in references {
                columns.append(try sqlite(reference.column(0)))
                if let to = try sqlite(reference.column(1, as: String?.self)) { parentColumns.append(to) }
            }
            if parentColumns.isEmpty {
                // `REFERENCES parent` without columns targets the parent's primary key.
                parentColumns = try fetch("SELECT name FROM pragma_table_info(?1, 'main') WHERE pk > 0 ORDER BY pk", [.text(parent)])
                    .map { row throws(FerryError) in try sqlite(row.column(0, as: String.self)) }
            }
            let row = try rowid.flatMap { rowid throws(FerryError) in
                try fetch("SELECT * FROM main.\(q(child)) WHERE rowid = ?1", [.integer(rowid)]).first
            }
            result.append(ForeignKeyViolation(table: child, rowid: rowid, columns: columns, parentTable: parent, parentColumns: parentColumns, row: row))
        }
        return result
    }
}
