import FerrySQLite

/// What the loaded SQLite does differently from the default engine, read from the engine itself.
enum EngineQuirks {
    /// Debian's SQLite 3.40 (the SystemSQLite trait) gives a subquery in FROM a rowid
    /// that reads NULL; 3.46 (the default engine) fails with "no such column". A migrating table is read as a
    /// subquery (its union), so reading the rowid of a migrating target `WITHOUT ROWID` reads NULL
    /// there, where the finished table fails (Docs/Limitations.md, Engine).
    static let subqueryRowidReadsNull: Bool = {
        guard let db = try? Connection.inMemory() else { return false }
        return (try? db.fetchAll("SELECT rowid FROM (SELECT 1)")) != nil
    }()
}
