import FerrySQLite
import Foundation

extension SchemaMigrator {
    // MARK: Detecting changed migrations (development reset)

    /// True when already-applied migrations changed since they ran:
    ///
    /// - the database applied an identifier this migrator does not know (a migration was removed
    ///   or renamed);
    /// - an applied migration's recorded checksum differs from its registered declaration;
    /// - replaying the applied migrations on a scratch database gives a different schema
    ///   (compared normalized: whitespace and comments do not count; internal objects are ignored).
    ///
    /// Newly registered, not yet applied migrations are not changes. The scratch database is a
    /// temporary file opened with this connection's configuration (so encrypted databases and
    /// `prepareStatements` work), deleted afterwards. Works on read-only connections.
    ///
    /// This is what `eraseDatabaseOnSchemaChange` uses; call it yourself to build another policy:
    /// ```swift
    /// if try db.read(migrator.hasSchemaChanges) { /* start from a fresh database */ }
    /// ```
    public func hasSchemaChanges(_ db: MigrationConnection) throws -> Bool {
        try hasSchemaChanges(db.connection)
    }

    /// `hasSchemaChanges(_:)` on a connection of this package (its tests and the CLI).
    package func hasSchemaChanges(_ db: Connection) throws -> Bool {
        try FerryError.surfacing {
            let applied = try appliedIdentifiers(db)
            if applied.isEmpty { return false }
            if !applied.isSubset(of: knownIdentifiers) { return true }
            if try !changedMigrations(db).isEmpty { return true }
            guard let replayed = try replaySchema(applied: applied, configuration: db.configuration) else {
                return false  // a merged Swift migration was applied only in part: it cannot be replayed
            }
            return try SchemaSnapshot(db) != replayed
        }
    }

    /// The schema that the applied migrations produce on an empty database, or nil when it cannot
    /// be reproduced.
    func replaySchema(applied: Set<String>, configuration: Connection.Configuration) throws -> SchemaSnapshot? {
        // The migrations to replay, and the merged (older) parts of not-yet-applied ones.
        var plan: [(Migration, mergedOnly: Set<String>?)] = []
        for migration in registered {
            if applied.contains(migration.identifier) {
                plan.append((migration, nil))
            } else {
                let partial = migration.mergedIdentifiers.intersection(applied)
                guard !partial.isEmpty else { continue }
                guard case .mergedSteps = migration.body else { return nil }
                plan.append((migration, partial))
            }
        }

        var scratchConfiguration = configuration
        scratchConfiguration.readOnly = false
        scratchConfiguration.createIfMissing = true
        scratchConfiguration.journalMode = .delete
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("ferry-migrator-scratch-\(UUID().uuidString).sqlite").path
        defer {
            for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let scratch = try Connection(path: path, configuration: scratchConfiguration)
        defer { scratch.close() }
        try scratch.execute("PRAGMA foreign_keys = OFF")
        for (migration, mergedOnly) in plan {
            try scratch.transaction(.immediate) {
                if let mergedOnly, case .mergedSteps(let merged, _) = migration.body {
                    for older in merged where mergedOnly.contains(older.identifier) {
                        for step in older.steps { try step.run(MigrationConnection(scratch)) }
                    }
                } else {
                    try migration.runBody(scratch, appliedMerged: [])
                }
            }
        }
        return try SchemaSnapshot(scratch)
    }
}
