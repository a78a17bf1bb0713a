import FerrySQLite
/// Full foreign-key verification with detailed errors, on a connection of this package.
enum ForeignKeyCheck {
    /// Every violation of `main` (or of `table` alone).
    static func violations(_ db: Connection, in table: String? = nil) throws(FerryError) -> [ForeignKeyViolation] {
        try ForeignKeyViolation.list(in: table) { sql, arguments throws(FerryError) in try sqlite(db.fetchAll(sql, arguments)) }
    }

    /// Runs `PRAGMA main.foreign_key_check` and throws the first violation, naming the child table
    /// and columns, the parent table and columns, and the offending row.
    static func throwFirstViolation(_ db: Connection, in table: String? = nil) throws(FerryError) {
        if let first = try violations(db, in: table).first { throw first.error }
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
    package func checkForeignKeys(in table: String? = nil) throws(FerryError) {
        try ForeignKeyCheck.throwFirstViolation(self, in: table)
    }
}
