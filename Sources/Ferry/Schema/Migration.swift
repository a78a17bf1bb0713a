import FerrySQLite
/// A registered migration (internal: the public surface is `SchemaMigrator`'s register methods).
struct Migration: Sendable {
    /// What a migration runs.
    enum Body: Sendable {
        /// Declarative steps: checksummed and linted.
        case steps([SchemaStep])
        /// Declarative steps that replace older migrations: each merged migration's own steps run
        /// when that migration was not applied yet, then the migration's own steps.
        case mergedSteps(merged: [MergedMigration], own: [SchemaStep])
        /// Swift code; checksummed only through the app-supplied version string.
        case closure(@Sendable (MigrationConnection, Set<String>) throws -> Void)
        /// An online rebuild carried out by a data-migration engine.
        case onlineRebuild(OnlineRebuild, any OnlineRebuildExecutor)
    }

    /// The effective foreign-key policy of a migration.
    enum ForeignKeyPolicy: Sendable, Equatable {
        case deferred, immediate, disabled
    }

    let identifier: String
    /// Older identifiers this migration replaces (never contains `identifier`).
    let mergedIdentifiers: Set<String>
    /// The declared foreign-key checks (part of the checksum).
    let declaredForeignKeyChecks: SchemaMigrator.ForeignKeyChecks
    /// The effective policy (the migrator-wide switch may disable deferred checks).
    let foreignKeyPolicy: ForeignKeyPolicy
    let body: Body
    /// `sha256v1:<hex>` for declarative bodies, `app:<version>` for closures given a checksum, nil
    /// for unchecked closures.
    let checksum: String?
    /// Lint rules this migration opts out of, with the reasons.
    let allowances: [SchemaLintAllowance]

    /// The kind recorded in the bookkeeping table.
    var kind: String {
        switch body {
        case .steps, .mergedSteps: return "sql"
        case .closure: return "closure"
        case .onlineRebuild: return "online-rebuild"
        }
    }

    /// The SQL steps the lint inspects, for declarative bodies; nil for closures.
    func lintedSteps(appliedMerged: Set<String>) -> [SchemaStep]? {
        switch body {
        case .steps(let steps):
            return steps
        case .mergedSteps(let merged, let own):
            return merged.filter { !appliedMerged.contains($0.identifier) }.flatMap(\.steps) + own
        case .closure, .onlineRebuild:
            return nil
        }
    }

    /// Runs the body (inside the transaction the migrator opened). The app's SQL and closures run
    /// as untrusted statements: on a `FerryDatabase` they cannot reach Ferry's catalog or sources
    /// (see `AccessDenial`); an online rebuild is Ferry's own work.
    func runBody(_ db: Connection, appliedMerged: Set<String>) throws {
        if case .onlineRebuild = body { return try runBodyAsIs(db, appliedMerged: appliedMerged) }
        db.clearAuthorizerDenial()
        do {
            try db.withStatementTrust(.untrusted) { try runBodyAsIs(db, appliedMerged: appliedMerged) }
        } catch let error as SQLiteError {
            let error = FerryError(error)
            if case .sqlite(_, _, let sql) = error, let denied = AccessDenial.error(for: error, sql: sql ?? "", on: db) { throw denied }
            throw error
        } catch let error as FerryError {
            if case .sqlite(_, _, let sql) = error, let denied = AccessDenial.error(for: error, sql: sql ?? "", on: db) { throw denied }
            throw error
        }
    }

    private func runBodyAsIs(_ connection: Connection, appliedMerged: Set<String>) throws {
        let db = MigrationConnection(connection)
        switch body {
        case .steps(let steps):
            for step in steps { try step.run(db) }
        case .mergedSteps(let merged, let own):
            for migration in merged where !appliedMerged.contains(migration.identifier) {
                for step in migration.steps { try step.run(db) }
            }
            for step in own { try step.run(db) }
        case .closure(let body):
            try body(db, appliedMerged)
        case .onlineRebuild(let rebuild, let executor):
            try executor.run(rebuild, on: db)
        }
    }

    /// The checksums of the merged migrations, when the body declares them.
    var mergedChecksums: [String: String] {
        guard case .mergedSteps(let merged, _) = body else { return [:] }
        var result: [String: String] = [:]
        for migration in merged {
            result[migration.identifier] = Migration.checksum(of: migration.steps, foreignKeyChecks: declaredForeignKeyChecks)
        }
        return result
    }

    // MARK: Checksums

    /// The checksum format tag; bump it when the canonical text or the normalizer changes.
    static let checksumFormat = "sha256v1"

    /// The checksum of declarative steps with their options.
    static func checksum(of steps: [SchemaStep], foreignKeyChecks: SchemaMigrator.ForeignKeyChecks) -> String {
        var text = "ferry-migration v1\nforeign-keys \(foreignKeyChecks)\n"
        for step in steps {
            text += step.canonicalText + "\n"
        }
        return checksumFormat + ":" + SHA256.hexDigest(text)
    }

    /// The checksum of an online rebuild declaration.
    static func checksum(of rebuild: OnlineRebuild, foreignKeyChecks: SchemaMigrator.ForeignKeyChecks) -> String {
        let text = "ferry-migration v1\nforeign-keys \(foreignKeyChecks)\n" + rebuild.canonicalText + "\n"
        return checksumFormat + ":" + SHA256.hexDigest(text)
    }
}

/// An older migration that a merged SQL migration replaces: its identifier and the steps it ran.
public struct MergedMigration: Sendable, Hashable {
    /// The identifier the older migration was recorded under.
    public let identifier: String
    /// The steps it ran (they run again, for databases that never applied it).
    public let steps: [SchemaStep]

    /// An older migration declared as SQL.
    public init(_ identifier: String, sql: String) {
        self.identifier = identifier
        self.steps = [.sql(sql)]
    }

    /// An older migration declared as steps.
    public init(_ identifier: String, steps: [SchemaStep]) {
        self.identifier = identifier
        self.steps = steps
    }
}
