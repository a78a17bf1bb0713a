import FerrySQLite

/// The schema migrator's queries on the app's handle, as GRDB's on its pool:
/// `try db.read(migrator.hasCompletedMigrations)` (each reads the bookkeeping table, which Ferry
/// reserves, as Ferry itself: the app's statements still cannot write it).
extension SchemaMigrator {
    /// `appliedIdentifiers(_:)` on the app's handle.
    public func appliedIdentifiers(_ db: FerryConnection) throws(FerryError) -> Set<String> {
        try db.asFerry { () throws(FerryError) in try appliedIdentifiers(db.connection) }
    }

    /// `appliedMigrations(_:)` on the app's handle.
    public func appliedMigrations(_ db: FerryConnection) throws(FerryError) -> [String] {
        try db.asFerry { () throws(FerryError) in try appliedMigrations(db.connection) }
    }

    /// `completedMigrations(_:)` on the app's handle.
    public func completedMigrations(_ db: FerryConnection) throws(FerryError) -> [String] {
        try db.asFerry { () throws(FerryError) in try completedMigrations(db.connection) }
    }

    /// `hasCompletedMigrations(_:)` on the app's handle: false when the database is too old for
    /// this migrator.
    public func hasCompletedMigrations(_ db: FerryConnection) throws(FerryError) -> Bool {
        try db.asFerry { () throws(FerryError) in try hasCompletedMigrations(db.connection) }
    }

    /// `hasBeenSuperseded(_:)` on the app's handle: true when the database is too new.
    public func hasBeenSuperseded(_ db: FerryConnection) throws(FerryError) -> Bool {
        try db.asFerry { () throws(FerryError) in try hasBeenSuperseded(db.connection) }
    }

    /// `appliedMigrationRecords(_:)` on the app's handle.
    public func appliedMigrationRecords(_ db: FerryConnection) throws(FerryError) -> [AppliedMigrationRecord] {
        try db.asFerry { () throws(FerryError) in try appliedMigrationRecords(db.connection) }
    }

    /// `changedMigrations(_:)` on the app's handle.
    public func changedMigrations(_ db: FerryConnection) throws(FerryError) -> [String] {
        try db.asFerry { () throws(FerryError) in try changedMigrations(db.connection) }
    }

    /// `hasSchemaChanges(_:)` on the app's handle.
    public func hasSchemaChanges(_ db: FerryConnection) throws -> Bool {
        try db.connection.withStatementTrust(.trusted) { try hasSchemaChanges(db.connection) }
    }
}
