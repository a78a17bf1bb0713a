import FerrySQLite
extension FerryDatabase {
    /// Applies the migrator's pending migrations on this database's writer, between the app's
    /// transactions, then reloads the data-migration state: a table an online rebuild just
    /// reshaped reads and writes through the migration at once, and steps start moving its rows.
    ///
    /// Run schema migrations through this method (not on another connection) while the database
    /// is open: readers and the writer then see the new schema and the new migration together.
    /// - Throws: what `SchemaMigrator.migrate(_:)` throws; applied migrations stay applied.
    @discardableResult
    public func migrateSchema(_ migrator: SchemaMigrator, upTo target: String? = nil) throws -> MigrationReport {
        try FerryError.surfacing { try pool.writeWithoutTransaction { db in try migrateSchema(migrator, upTo: target, on: db) } }
    }

    /// Async form of `migrateSchema(_:upTo:)`.
    @discardableResult
    public func migrateSchema(_ migrator: SchemaMigrator, upTo target: String? = nil) async throws -> MigrationReport {
        try await FerryError.surfacing { try await pool.writeWithoutTransaction { [self] db in try migrateSchema(migrator, upTo: target, on: db) } }
    }

    /// Migrates, then reloads the engine's state (also after a failure: earlier migrations of the
    /// run may have committed).
    private func migrateSchema(_ migrator: SchemaMigrator, upTo target: String?, on db: Connection) throws -> MigrationReport {
        // The migrations' ALTER TABLEs meet the app's trigger text, not Ferry's calls (see
        // `AppTriggerWrites.restoreAppTexts`); the calls come back from the text they leave.
        try db.withStatementTrust(.trusted) { () throws(FerryError) in try AppTriggerWrites.restoreAppTexts(on: db) }
        defer { try? db.withStatementTrust(.trusted) { () throws(FerryError) in try AppTriggerWrites.sync(on: db) } }
        let report: MigrationReport
        do {
            report = try target.map { try migrator.migrate(db, upTo: $0) } ?? migrator.migrate(db)
        } catch {
            appEdits.transactionEnded(on: db)  // earlier migrations of the run may have committed
            try? engine.load(on: db)
            commits.send()
            throw error
        }
        appEdits.transactionEnded(on: db)
        try engine.load(on: db)
        commits.send()
        return report
    }
}
