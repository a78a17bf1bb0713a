import FerrySQLite
import Synchronization

/// The app's reads and writes: every statement goes through the rewriter.
extension FerryDatabase {
    /// Runs `body` with a read-only handle on a reader connection, in one snapshot.
    public func read<T>(_ body: (FerryConnection) throws -> T) throws -> T {
        try pool.read { db in
            try refreshMainSchema(db)
            return try body(FerryConnection(connection: db, redirector: try redirector(on: db), isWriter: false,
                                            unavailableSources: engine.unavailableSources(on: db)))
        }
    }

    /// Runs `body` in a write transaction on the writer (committed when it returns, rolled back
    /// when it throws). Migration steps never run inside it.
    public func write<T>(_ body: (FerryConnection) throws -> T) throws -> T {
        try pool.writeWithoutTransaction { db in
            let handle = try writerHandle(on: db)  // temp DDL outside the app's transaction
            defer {
                reloadIfMigrationEnded(on: db)
                checkpointer.checkpointIfNeeded()
            }
            return try db.transaction(.immediate) { try body(handle) }
        }
    }

    /// Async form of `read(_:)`.
    public func read<T: Sendable>(_ body: @escaping @Sendable (FerryConnection) throws -> T) async throws -> T {
        try await pool.read { [self] db in
            try refreshMainSchema(db)
            return try body(FerryConnection(connection: db, redirector: try redirector(on: db), isWriter: false,
                                            unavailableSources: engine.unavailableSources(on: db)))
        }
    }

    /// Async form of `write(_:)`.
    public func write<T: Sendable>(_ body: @escaping @Sendable (FerryConnection) throws -> T) async throws -> T {
        try await pool.writeWithoutTransaction { [self] db in
            let handle = try writerHandle(on: db)  // temp DDL outside the app's transaction
            defer {
                reloadIfMigrationEnded(on: db)
                checkpointer.checkpointIfNeeded()
            }
            return try db.transaction(.immediate) { try body(handle) }
        }
    }

    /// Makes a reader see main's current schema before resolving names. SQLite resolves an
    /// unqualified name with the schemas it has in memory and rechecks only the files a statement
    /// uses: with a stale copy of main (a table dropped and created again by the writer), a name
    /// that an attached source also has would bind to the source and never be rechecked.
    private func refreshMainSchema(_ db: Connection) throws(FerryError) {
        try db.cachedStatement("SELECT 1 FROM main.sqlite_master LIMIT 0").execute()
    }

    /// Reloads the migration state from the catalog after a transaction that ended a table's
    /// migration (committed or rolled back: the catalog is the truth either way).
    private func reloadIfMigrationEnded(on db: Connection) {
        let ended = appChanges.migrationEnded.withLock { value -> Bool in
            defer { value = false }
            return value
        }
        guard ended else { return }
        do { try engine.load(on: db) } catch { hub.send(.error(error)) }
    }

    /// The writer's handle, with the redirect triggers matching the current migrating tables.
    private func writerHandle(on db: Connection) throws(FerryError) -> FerryConnection {
        let redirector = try currentRedirector(on: db)
        if installedTriggerEpoch.withLock({ $0 }) != redirector.epoch {
            try installTriggers(redirector, on: db)
            installedTriggerEpoch.withLock { $0 = redirector.epoch }
        }
        return FerryConnection(connection: db, redirector: redirector.redirector, isWriter: true, appChanges: appChanges,
                               unavailableSources: engine.unavailableSources(on: db))
    }

    /// The redirector for the current migrating tables (rebuilt when they change).
    func currentRedirector(on db: Connection) throws(FerryError) -> (epoch: Int, redirector: StatementRedirector) {
        // Every read and write asks: the cache check reads the epoch alone, the rest only on a miss.
        if let cached = redirectorCache.withLock({ $0 }), cached.epoch == engine.epoch { return cached }
        let (epoch, mappings, attachedSourceTables) = engine.redirectorSnapshot
        var tables: [MigratingTableSQL] = []
        for mapping in mappings {
            tables.append(MigratingTableSQL(mapping: mapping, uniqueKeys: try MigratingTableSQL.uniqueKeys(of: mapping, on: db)))
        }
        let (views, unreadable) = try DependentView.load(on: db, reading: StatementRedirector.migratingRelations(tables))
        let built = (epoch: epoch, redirector: StatementRedirector(tables: tables, views: views, unreadableViews: unreadable,
                                                                   attachedSourceTables: attachedSourceTables))
        redirectorCache.withLock { $0 = built }
        return built
    }

    private func redirector(on db: Connection) throws(FerryError) -> StatementRedirector {
        try currentRedirector(on: db).redirector
    }

    /// Replaces Ferry's temp triggers on the writer with those of the current migrating tables.
    private func installTriggers(_ current: (epoch: Int, redirector: StatementRedirector), on db: Connection) throws(FerryError) {
        let existing = try db.fetchAll("SELECT name FROM temp.sqlite_master WHERE type = 'trigger' AND name LIKE 'ferry\\_redirect\\_%' ESCAPE '\\'")
        for row in existing {
            let name: String = try row.get(0)
            try db.execute("DROP TRIGGER temp.\(q(name))")
        }
        for table in current.redirector.tables.values {
            for sql in table.triggerSQL { try db.execute(sql) }
        }
    }
}
