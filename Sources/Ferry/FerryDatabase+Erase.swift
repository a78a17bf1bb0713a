import FerrySQLite

/// Erasing the database: every table, index, view and trigger of the target, as GRDB's
/// `DatabasePool.erase()` (tests, or an app's "reset all data").
extension FerryDatabase {
    /// Deletes every table, index, view and trigger of the target database (SQLite's statistics
    /// and AUTOINCREMENT counters too) and resets its `user_version`, in one transaction on the
    /// writer, between the app's transactions; plain and encrypted databases alike. The database
    /// stays open: the app's next reads see an empty schema, and its writes build a new one.
    ///
    /// Ferry's catalog goes with the rest: the registered migrations (all finished) and the schema
    /// migrator's history are forgotten, so a plan registered afterwards starts from nothing, and
    /// a `SchemaMigrator` applies every migration again. Source files are left as they are: a
    /// finished table whose source cleanup had not ended keeps its moved rows there (a plan that
    /// registers that source again moves them again). Source tables kept in the target file are
    /// erased with it.
    /// - Throws: `FerryError.unsupportedDuringMigration` while a registered table is migrating
    ///   (its rows would be lost with the source tables that still hold them; finish the migration
    ///   first), nothing erased; `FerryError.sqlite` with code `.readonly` on a read-only target;
    ///   SQLite's errors (the transaction rolled back, nothing erased).
    public func erase() throws(FerryError) {
        if isReadOnly { throw .sqlite(code: .readonly, message: "\(path) is open read-only: it cannot be erased", sql: nil) }
        retirer.waitUntilIdle()
        try pool.writeWithoutTransaction { db throws(FerryError) in try erase(on: db) }
    }

    /// Async form of `erase()`.
    public func erase() async throws(FerryError) {
        if isReadOnly { throw .sqlite(code: .readonly, message: "\(path) is open read-only: it cannot be erased", sql: nil) }
        retirer.waitUntilIdle()
        try await pool.writeWithoutTransaction { [self] db throws(FerryError) in try erase(on: db) }
    }

    /// On the writer, outside a transaction: refuses while a table migrates (read from the
    /// persisted state, which only the writer changes), erases, then reloads the engine from the
    /// empty catalog (the sources are detached from each connection at its next use).
    private func erase(on db: Connection) throws(FerryError) {
        if let migrating = try MigrationState.loadTables(on: db).first(where: { $0.state != .finished }) {
            throw .unsupportedDuringMigration(
                table: migrating.target, statement: "erase()",
                reason: "the database cannot be erased while a registered table is migrating: its pending rows are still in its source; finish the migration first (migrateAll), or delete the database file")
        }
        do {
            try db.eraseDatabase()
        } catch let error as FerryError {
            throw error
        } catch {
            throw .misuse("erasing the database failed: \(error)")
        }
        appEdits.discard()  // the edits of moved rows of tables that are gone
        retirer.forgetOutcomes()
        try engine.load(on: db)
        sourcePins.refresh()
        commits.send()  // observed queries run again (and fail on the tables that are gone)
    }
}
