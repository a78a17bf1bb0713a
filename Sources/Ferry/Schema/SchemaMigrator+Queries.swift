import FerrySQLite
extension SchemaMigrator {
    // MARK: Querying the database

    /// Every identifier recorded in the database, registered or not (empty when the bookkeeping
    /// table does not exist yet).
    public func appliedIdentifiers(_ db: MigrationConnection) throws(FerryError) -> Set<String> {
        try appliedIdentifiers(db.connection)
    }

    /// `appliedIdentifiers(_:)` on a connection of this package (its tests and the CLI).
    package func appliedIdentifiers(_ db: Connection) throws(FerryError) -> Set<String> {
        try SchemaMigrationLog.identifiers(on: db)
    }

    /// The registered migrations the database applied, in registration order.
    public func appliedMigrations(_ db: MigrationConnection) throws(FerryError) -> [String] {
        try appliedMigrations(db.connection)
    }

    /// `appliedMigrations(_:)` on a connection of this package (its tests and the CLI).
    package func appliedMigrations(_ db: Connection) throws(FerryError) -> [String] {
        let applied = try appliedIdentifiers(db)
        return migrations.filter(applied.contains)
    }

    /// The longest prefix of the registered migrations that the database applied entirely (a
    /// migration inserted in the middle of history by a branch merge stops the prefix until it runs).
    public func completedMigrations(_ db: MigrationConnection) throws(FerryError) -> [String] {
        try completedMigrations(db.connection)
    }

    /// `completedMigrations(_:)` on a connection of this package (its tests and the CLI).
    package func completedMigrations(_ db: Connection) throws(FerryError) -> [String] {
        let applied = try appliedIdentifiers(db)
        return Array(migrations.prefix(while: applied.contains))
    }

    /// True when every registered migration is applied (the database is not too old for this
    /// migrator). True for an empty migrator.
    public func hasCompletedMigrations(_ db: MigrationConnection) throws(FerryError) -> Bool {
        try hasCompletedMigrations(db.connection)
    }

    /// `hasCompletedMigrations(_:)` on a connection of this package (its tests and the CLI).
    package func hasCompletedMigrations(_ db: Connection) throws(FerryError) -> Bool {
        try completedMigrations(db).count == registered.count
    }

    /// True when the database applied migrations this migrator does not know: it was migrated by a
    /// newer version of the app (the database is too new). Identifiers replaced by a merged
    /// migration count as known.
    public func hasBeenSuperseded(_ db: MigrationConnection) throws(FerryError) -> Bool {
        try hasBeenSuperseded(db.connection)
    }

    /// `hasBeenSuperseded(_:)` on a connection of this package (its tests and the CLI).
    package func hasBeenSuperseded(_ db: Connection) throws(FerryError) -> Bool {
        let known = knownIdentifiers
        return try appliedIdentifiers(db).contains { !known.contains($0) }
    }

    /// The bookkeeping rows, oldest first.
    public func appliedMigrationRecords(_ db: MigrationConnection) throws(FerryError) -> [AppliedMigrationRecord] {
        try appliedMigrationRecords(db.connection)
    }

    /// `appliedMigrationRecords(_:)` on a connection of this package (its tests and the CLI).
    package func appliedMigrationRecords(_ db: Connection) throws(FerryError) -> [AppliedMigrationRecord] {
        try SchemaMigrationLog.records(on: db)
    }

    /// Applied migrations whose recorded checksum differs from what is registered now, in
    /// registration order (merged migrations' recorded checksums are compared with their declared
    /// SQL). Unchecked migrations (recorded or registered without a checksum) never appear.
    public func changedMigrations(_ db: MigrationConnection) throws(FerryError) -> [String] {
        try changedMigrations(db.connection)
    }

    /// `changedMigrations(_:)` on a connection of this package (its tests and the CLI).
    package func changedMigrations(_ db: Connection) throws(FerryError) -> [String] {
        let recorded = try SchemaMigrationLog.checksums(on: db)
        var changed: [String] = []
        for migration in registered {
            for (merged, checksum) in migration.mergedChecksums.sorted(by: { $0.key < $1.key }) {
                if let stored = recorded[merged], stored != checksum { changed.append(merged) }
            }
            if let checksum = migration.checksum, let stored = recorded[migration.identifier], stored != checksum {
                changed.append(migration.identifier)
            }
        }
        return changed
    }

    /// Records the current checksums of changed applied migrations (after you checked that the
    /// change is harmless, e.g. a reworded but equivalent statement). Returns the repaired
    /// identifiers. Runs in an IMMEDIATE transaction.
    @discardableResult
    public func repairChecksums(_ db: MigrationConnection) throws -> [String] {
        try repairChecksums(db.connection)
    }

    /// `repairChecksums(_:)` on a connection of this package (its tests and the CLI).
    @discardableResult
    package func repairChecksums(_ db: Connection) throws -> [String] {
        try FerryError.surfacing {
            try db.transaction(.immediate) {
                let changed = try changedMigrations(db)
                var checksums: [String: String] = [:]
                for migration in registered {
                    checksums.merge(migration.mergedChecksums) { a, _ in a }
                    if let checksum = migration.checksum { checksums[migration.identifier] = checksum }
                }
                for id in changed {
                    try SchemaMigrationLog.recordChecksum(checksums[id], of: id, on: db)
                }
                return changed
            }
        }
    }
}
