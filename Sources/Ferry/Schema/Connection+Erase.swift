import FerrySQLite
extension Connection {
    /// Deletes every table, index, view and trigger of `main` (and SQLite's statistics and
    /// AUTOINCREMENT counters), and resets `user_version`: the database becomes empty.
    ///
    /// Works on plain and encrypted databases alike (objects are dropped one by one, in one
    /// transaction, with foreign keys off; SQLCipher cannot use the backup API across keys).
    /// - Throws: `FerryError.misuse` inside a transaction.
    package func eraseDatabase() throws {
        try FerryError.surfacing {
            guard !isInTransaction else {
                throw FerryError.misuse("eraseDatabase must run outside a transaction (foreign keys are switched off while it runs)")
            }
            let foreignKeysOn = try scalar("PRAGMA foreign_keys", as: Int.self) == 1
            try execute("PRAGMA foreign_keys = OFF")
            let result = Result<Void, any Error> {
                try transaction(.immediate) {
                    let objects = try fetchAll("""
                        SELECT type, name, sql FROM main.sqlite_master
                        WHERE type IN ('table', 'view', 'trigger') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                        """)
                    func rank(_ row: Row) -> Int {
                        let type = (try? row.column(0, as: String.self)) ?? ""
                        let sql = (try? row.column(2, as: String?.self)) ?? nil
                        switch type {
                        case "trigger": return 0
                        case "view": return 1
                        default: return (sql ?? "").uppercased().hasPrefix("CREATE VIRTUAL") ? 2 : 3
                        }
                    }
                    for object in objects.sorted(by: { rank($0) < rank($1) }) {
                        let type: String = try object.column(0)
                        let name: String = try object.column(1)
                        // Dropping a virtual table drops its shadow tables: IF EXISTS skips those.
                        try execute("DROP \(type.uppercased()) IF EXISTS main.\(quoteIdentifier(name))")
                    }
                    for stat in ["sqlite_stat1", "sqlite_stat4"] where try MigrationConnection(self).tableExists(stat) {
                        try execute("DROP TABLE main.\(stat)")
                    }
                    if try MigrationConnection(self).tableExists("sqlite_sequence") {
                        try execute("DELETE FROM main.sqlite_sequence")
                    }
                    try execute("PRAGMA main.user_version = 0")
                }
            }
            if foreignKeysOn { try execute("PRAGMA foreign_keys = ON") }
            try result.get()
            clearStatementCache()
        }
    }
}
