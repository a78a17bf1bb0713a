import FerrySQLite
/// Full foreign-key verification with detailed errors.
enum ForeignKeyCheck {
    /// Runs `PRAGMA main.foreign_key_check` and throws the first violation, naming the child table
    /// and columns, the parent table and columns, and the offending row.
    static func throwFirstViolation(_ db: Connection) throws(FerryError) {
        guard let violation = try sqlite(db.fetchOne("PRAGMA main.foreign_key_check")) else { return }
        throw try describe(violation, db)
    }

    /// Every violation in `main`, as errors (for tests and tooling).
    static func violations(_ db: Connection) throws(FerryError) -> [FerryError] {
        var errors: [FerryError] = []
        for violation in try sqlite(db.fetchAll("PRAGMA main.foreign_key_check")) {
            errors.append(try describe(violation, db))
        }
        return errors
    }

    private static func describe(_ violation: Row, _ db: Connection) throws(FerryError) -> FerryError {
        // Columns: table, rowid (NULL for WITHOUT ROWID tables), parent, fkid.
        let table: String = try sqlite(violation.get(0))
        let rowid = try sqlite(violation.get(1, as: Int64?.self))
        let parent: String = try sqlite(violation.get(2))
        let fkid: Int = try sqlite(violation.get(3))

        var columns: [String] = []
        var parentColumns: [String] = []
        let references = try sqlite(db.fetchAll("SELECT \"from\", \"to\" FROM pragma_foreign_key_list(?, 'main') WHERE id = ? ORDER BY seq",
                                         [.text(table), .integer(Int64(fkid))]))
        for reference in references {
            columns.append(try sqlite(reference.get(0)))
            if let to = try sqlite(reference.get(1, as: String?.self)) { parentColumns.append(to) }
        }
        if parentColumns.isEmpty {
            // `REFERENCES parent` without columns targets the parent's primary key.
            parentColumns = try sqlite(db.fetchAll("SELECT name FROM pragma_table_info(?, 'main') WHERE pk > 0 ORDER BY pk", [.text(parent)]))
                .map { row throws(FerryError) in try sqlite(row.get(0, as: String.self)) }
        }

        var rowText = "an unidentified row (WITHOUT ROWID table)"
        if let rowid {
            rowText = "rowid \(rowid)"
            if let row = try? db.fetchOne("SELECT * FROM main.\(db.quoteIdentifier(table)) WHERE rowid = ?", [.integer(rowid)]) {
                rowText += " [" + zip(row.columnNames, row.values).map { "\($0):\($1)" }.joined(separator: " ") + "]"
            }
        }
        return .foreignKeyViolation(table: table, columns: columns, parentTable: parent, parentColumns: parentColumns, row: rowText)
    }
}

extension FerryError {
    /// True for a foreign key failure: a deferred check's `foreignKeyViolation`, or SQLite's
    /// `SQLITE_CONSTRAINT_FOREIGNKEY` raised by a statement (immediate checks).
    public var isForeignKeyViolation: Bool {
        if case .foreignKeyViolation = self { return true }
        return resultCode == .constraintForeignKey
    }
}

extension Connection {
    /// `MigrationConnection.checkForeignKeys()` on a connection of this package.
    package func checkForeignKeys() throws(FerryError) {
        try ForeignKeyCheck.throwFirstViolation(self)
    }
}
