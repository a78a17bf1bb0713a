import FerrySQLite
/// The result of `SchemaMigrator.checkUpgradePaths`: one entry per path, and every problem found.
public struct UpgradePathReport: Sendable {
    /// One path: a fresh install (`from == nil`) or an upgrade from the database as it was after
    /// migration `from`.
    public struct Path: Sendable {
        /// The version the database started from (nil for a fresh install).
        public var from: String?
        /// The migrations the upgrade applied.
        public var applied: [String]
        /// What went wrong on this path (empty when it is fine).
        public var problems: [String]
    }

    /// The schema of a fresh install: the reference every upgrade must reach.
    public var freshSchema: SchemaSnapshot
    /// Every path checked, the fresh install first.
    public var paths: [Path]

    /// Every problem, each prefixed by its path (`fresh install: ...`, `from v2: ...`).
    public var problems: [String] {
        paths.flatMap { path in path.problems.map { "\(path.from.map { "from \($0)" } ?? "fresh install"): \($0)" } }
    }

    /// True when no path has a problem.
    public var isSuccessful: Bool { paths.allSatisfy(\.problems.isEmpty) }
}

extension SchemaMigrator {
    // MARK: Test helpers

    /// Checks the testing checklist of safe migrations on scratch databases:
    ///
    /// 1. a fresh install (every migration on an empty database) succeeds;
    /// 2. an upgrade from every earlier version (the database after each registered migration but
    ///    the last, or after each migration of `earlierVersions`, e.g. the migrator before a merge)
    ///    succeeds and ends with the same schema as the fresh install (compared normalized);
    /// 3. migrating twice is a no-op: the second run applies nothing and changes no row or schema;
    /// 4. data survives: `seed` inserts rows into the database at each earlier version; after the
    ///    upgrade every table that held rows still exists with at least as many rows, and `verify`
    ///    (called with the starting version, nil for the fresh install) can check the data itself.
    ///
    /// Problems are collected, not thrown: assert `report.problems.isEmpty`. The development reset
    /// is off on the scratch databases. `makeDatabase` opens each scratch database (an in-memory one
    /// by default; pass a file with a cipher to test encrypted databases).
    public func checkUpgradePaths(
        from earlierVersions: SchemaMigrator? = nil,
        makeDatabase: () throws -> MigrationConnection = { try MigrationConnection.inMemory() },
        seed: (_ version: String, _ db: MigrationConnection) throws -> Void = { _, _ in },
        verify: (_ from: String?, _ db: MigrationConnection) throws -> Void = { _, _ in }
    ) throws -> UpgradePathReport {
        var migrator = self
        migrator.eraseDatabaseOnSchemaChange = false

        // 1. Fresh install.
        let freshHandle = try makeDatabase()
        let fresh = freshHandle.connection
        defer { fresh.close() }
        var freshPath = UpgradePathReport.Path(from: nil, applied: [], problems: [])
        let freshSchema: SchemaSnapshot
        do {
            freshPath.applied = try migrator.migrate(fresh).appliedIdentifiers
            freshSchema = try SchemaSnapshot(fresh)
            freshPath.problems += try Self.secondRunProblems(migrator, fresh, expected: freshSchema)
            try verify(nil, freshHandle)
        } catch {
            freshPath.problems.append("migration failed: \(error)")
            return UpgradePathReport(freshSchema: try SchemaSnapshot(fresh), paths: [freshPath])
        }
        var paths = [freshPath]

        // 2. Upgrades from every earlier version.
        let history = earlierVersions ?? migrator
        var startingPoints = history.migrations
        if earlierVersions == nil { startingPoints = Array(startingPoints.dropLast()) }
        for version in startingPoints {
            let handle = try makeDatabase()
            let db = handle.connection
            defer { db.close() }
            var path = UpgradePathReport.Path(from: version, applied: [], problems: [])
            do {
                var old = history
                old.eraseDatabaseOnSchemaChange = false
                try old.migrate(db, upTo: version)
                try seed(version, handle)
                let countsBefore = try Self.rowCounts(db)
                path.applied = try migrator.migrate(db).appliedIdentifiers
                path.problems += try SchemaSnapshot(db).differences(from: freshSchema).map { "schema differs from a fresh install: \($0)" }
                let countsAfter = try Self.rowCounts(db)
                for (table, before) in countsBefore.sorted(by: { $0.key < $1.key }) where before > 0 {
                    guard let after = countsAfter[table] else {
                        path.problems.append("table \(table) held \(before) row(s) and is gone after the upgrade")
                        continue
                    }
                    if after < before {
                        path.problems.append("table \(table) held \(before) row(s) and has \(after) after the upgrade")
                    }
                }
                path.problems += try Self.secondRunProblems(migrator, db, expected: try SchemaSnapshot(db))
                try verify(version, handle)
            } catch {
                path.problems.append("failed: \(error)")
            }
            paths.append(path)
        }
        return UpgradePathReport(freshSchema: freshSchema, paths: paths)
    }

    /// Migrating an up-to-date database again must apply nothing and change nothing.
    private static func secondRunProblems(_ migrator: SchemaMigrator, _ db: Connection, expected: SchemaSnapshot) throws -> [String] {
        var problems: [String] = []
        let changesBefore = db.totalChanges
        let again = try migrator.migrate(db)
        if !again.applied.isEmpty {
            problems.append("migrating twice applied \(again.appliedIdentifiers) again")
        }
        if db.totalChanges != changesBefore {
            problems.append("migrating twice changed \(db.totalChanges - changesBefore) row(s)")
        }
        problems += try SchemaSnapshot(db).differences(from: expected).map { "migrating twice changed the schema: \($0)" }
        return problems
    }

    /// Row counts of every ordinary table of `main` (internal tables excluded).
    static func rowCounts(_ db: Connection) throws(FerryError) -> [String: Int] {
        var counts: [String: Int] = [:]
        let tables = try sqlite(db.fetchAll("""
            SELECT name FROM main.sqlite_master WHERE type = 'table'
              AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE 'ferry\\_%' ESCAPE '\\'
              AND sql NOT LIKE 'CREATE VIRTUAL%'
            """))
        for row in tables {
            let name: String = try sqlite(row.column(0))
            counts[name] = try sqlite(db.scalar("SELECT count(*) FROM main.\(db.quoteIdentifier(name))", as: Int.self)) ?? 0
        }
        return counts
    }
}
