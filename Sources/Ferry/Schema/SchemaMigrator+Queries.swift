/// One row of `main.ferry_schema_migrations`: a migration the database applied.
public struct AppliedMigrationRecord: Sendable, Hashable {
    /// The migration identifier.
    public var identifier: String
    /// When it was applied (UTC, ISO 8601 with milliseconds, e.g. `2026-01-31T12:00:00.123Z`).
    public var appliedAt: String
    /// How long its body took, in milliseconds.
    public var durationMilliseconds: Double
    /// The checksum of its declaration (`sha256v1:<hex>`, `app:<version>`), or nil when unchecked.
    public var checksum: String?
    /// `sql`, `closure` or `online-rebuild`.
    public var kind: String
    /// The older identifiers it replaced (merged migrations).
    public var replaced: [String]
    /// The lint rules it opted out of, with the reasons (`rule: reason`), one per line; nil if none.
    public var lintAllowances: String?
}

extension SchemaMigrator {
    // MARK: Querying the database

    /// Every identifier recorded in the database, registered or not (empty when the bookkeeping
    /// table does not exist yet).
    public func appliedIdentifiers(_ db: Connection) throws(FerryError) -> Set<String> {
        guard try Self.bookkeepingTableExists(db) else { return [] }
        return Set(try db.fetchAll("SELECT identifier FROM main.\(Self.bookkeepingTable)").map { row throws(FerryError) in
            try row.get(0, as: String.self)
        })
    }

    /// The registered migrations the database applied, in registration order.
    public func appliedMigrations(_ db: Connection) throws(FerryError) -> [String] {
        let applied = try appliedIdentifiers(db)
        return migrations.filter(applied.contains)
    }

    /// The longest prefix of the registered migrations that the database applied entirely (a
    /// migration inserted in the middle of history by a branch merge stops the prefix until it runs).
    public func completedMigrations(_ db: Connection) throws(FerryError) -> [String] {
        let applied = try appliedIdentifiers(db)
        return Array(migrations.prefix(while: applied.contains))
    }

    /// True when every registered migration is applied (the database is not too old for this
    /// migrator). True for an empty migrator.
    public func hasCompletedMigrations(_ db: Connection) throws(FerryError) -> Bool {
        try completedMigrations(db).count == registered.count
    }

    /// True when the database applied migrations this migrator does not know: it was migrated by a
    /// newer version of the app (the database is too new). Identifiers replaced by a merged
    /// migration count as known.
    public func hasBeenSuperseded(_ db: Connection) throws(FerryError) -> Bool {
        let known = knownIdentifiers
        return try appliedIdentifiers(db).contains { !known.contains($0) }
    }

    /// The bookkeeping rows, oldest first.
    public func appliedMigrationRecords(_ db: Connection) throws(FerryError) -> [AppliedMigrationRecord] {
        guard try Self.bookkeepingTableExists(db) else { return [] }
        return try db.fetchAll("""
            SELECT identifier, applied_at, duration_ms, checksum, kind, replaced, lint_allowances
            FROM main.\(Self.bookkeepingTable) ORDER BY rowid
            """).map { row throws(FerryError) in
            AppliedMigrationRecord(
                identifier: try row.get(0), appliedAt: try row.get(1), durationMilliseconds: try row.get(2),
                checksum: try row.get(3, as: String?.self), kind: try row.get(4),
                replaced: (try row.get(5, as: String?.self)).map { $0.split(separator: "\n").map(String.init) } ?? [],
                lintAllowances: try row.get(6, as: String?.self))
        }
    }

    /// Applied migrations whose recorded checksum differs from what is registered now, in
    /// registration order (merged migrations' recorded checksums are compared with their declared
    /// SQL). Unchecked migrations (recorded or registered without a checksum) never appear.
    public func changedMigrations(_ db: Connection) throws(FerryError) -> [String] {
        guard try Self.bookkeepingTableExists(db) else { return [] }
        var recorded: [String: String] = [:]
        for row in try db.fetchAll("SELECT identifier, checksum FROM main.\(Self.bookkeepingTable) WHERE checksum IS NOT NULL") {
            recorded[try row.get(0, as: String.self)] = try row.get(1, as: String.self)
        }
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
    public func repairChecksums(_ db: Connection) throws -> [String] {
        try db.transaction(.immediate) {
            let changed = try changedMigrations(db)
            var checksums: [String: String] = [:]
            for migration in registered {
                checksums.merge(migration.mergedChecksums) { a, _ in a }
                if let checksum = migration.checksum { checksums[migration.identifier] = checksum }
            }
            for id in changed {
                try db.execute("UPDATE main.\(Self.bookkeepingTable) SET checksum = ? WHERE identifier = ?",
                               [checksums[id].map(Value.text) ?? .null, .text(id)])
            }
            return changed
        }
    }

    static func bookkeepingTableExists(_ db: Connection) throws(FerryError) -> Bool {
        try db.scalar("SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = ?",
                      [.text(bookkeepingTable)], as: Int.self) ?? 0 > 0
    }

    static func createBookkeepingTable(_ db: Connection) throws(FerryError) {
        try db.execute("""
            CREATE TABLE IF NOT EXISTS main.\(bookkeepingTable) (
                identifier TEXT NOT NULL PRIMARY KEY,
                applied_at TEXT NOT NULL,
                duration_ms REAL NOT NULL,
                checksum TEXT,
                kind TEXT NOT NULL,
                replaced TEXT,
                lint_allowances TEXT
            )
            """)
    }
}
