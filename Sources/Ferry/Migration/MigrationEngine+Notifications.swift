extension MigrationEngine {
    /// Tables finished but not yet announced, and whether "all finished" is still to be announced.
    func pendingNotifications(on db: Connection) throws(FerryError) -> (tables: [String], all: Bool) {
        guard try MigrationCatalog.exists(on: db) else { return ([], false) }
        let tables: [String] = try db.fetchAll(
            "SELECT target FROM main.\(MigrationCatalog.tablesTable) WHERE state = 'finished' AND notified = 0 ORDER BY rowid"
        ).map { row throws(FerryError) in try row.get(0) }
        let unfinished = try db.scalar("SELECT count(*) FROM main.\(MigrationCatalog.tablesTable) WHERE state != 'finished'", as: Int.self) ?? 0
        let total = try db.scalar("SELECT count(*) FROM main.\(MigrationCatalog.tablesTable)", as: Int.self) ?? 0
        let allNotified = try db.scalar("SELECT value FROM main.\(MigrationCatalog.flagsTable) WHERE key = 'all_finished_notified'", as: Int.self) ?? 0
        return (tables, total > 0 && unfinished == 0 && allNotified == 0)
    }

    /// Records that notifications were delivered.
    func markNotified(tables: [String], all: Bool, on db: Connection) throws(FerryError) {
        try db.inTransaction(.immediate) { () throws(FerryError) in
            for table in tables {
                try db.execute("UPDATE main.\(MigrationCatalog.tablesTable) SET notified = 1 WHERE target = ?", [.text(table)])
            }
            if all {
                try db.execute("INSERT OR REPLACE INTO main.\(MigrationCatalog.flagsTable)(key, value) VALUES ('all_finished_notified', 1)")
            }
        }
    }
}
