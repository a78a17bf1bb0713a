import FerrySQLite

/// Foreign-key checks on the app's handle: read through Ferry's rewrite, so a migrating table's
/// pending rows count as children and parents, as on the finished table.
extension FerryConnection {
    /// Every row of `main` (or of `table` alone) whose foreign key has no parent row.
    public func foreignKeyViolations(in table: String? = nil) throws(FerryError) -> [ForeignKeyViolation] {
        try ForeignKeyViolation.list(in: table) { sql, arguments throws(FerryError) in try fetchAll(sql, arguments) }
    }

    /// Throws the first row of `main` (or of `table` alone) whose foreign key has no parent row,
    /// as `FerryError.foreignKeyViolation`.
    public func checkForeignKeys(in table: String? = nil) throws(FerryError) {
        if let first = try foreignKeyViolations(in: table).first { throw first.error }
    }
}
