import FerrySQLite
import Foundation
import Logging

/// What one `migrate` call did.
public struct MigrationReport: Sendable {
    /// One migration that ran.
    public struct Applied: Sendable, Hashable {
        /// Its identifier.
        public var identifier: String
        /// How long its body took.
        public var duration: Duration
        /// The older identifiers it replaced (merged migrations).
        public var replaced: [String]
    }

    /// The migrations that ran, in order.
    public var applied: [Applied] = []
    /// True when the development reset erased the database first.
    public var erasedDatabase = false
    /// Lint findings that did not stop a migration: warnings, findings the migration opted out
    /// of (with its reason), and everything in `LintMode.warn`.
    public var lintFindings: [SchemaLintFinding] = []

    /// The identifiers of the migrations that ran.
    public var appliedIdentifiers: [String] { applied.map(\.identifier) }
}

let schemaLogger = Logger(label: "ferry.schema")

extension SchemaMigrator {
    // MARK: Migrating

    /// Applies every registered migration the database has not applied yet.
    /// - Throws: `FerryError.shippedMigrationChanged` when an applied migration changed,
    ///   `FerryError.unsafeMigration` when the lint refuses a statement,
    ///   `FerryError.foreignKeyViolation` when a deferred check fails, `FerryError.misuse` inside a
    ///   transaction, and whatever a migration throws (that migration is rolled back).
    @discardableResult
    public func migrate(_ db: MigrationConnection) throws -> MigrationReport {
        try migrate(db.connection)
    }

    /// `migrate(_:)` on a connection of this package (its tests and the CLI).
    @discardableResult
    package func migrate(_ db: Connection) throws -> MigrationReport {
        try FerryError.surfacing { try run(db, upTo: nil) }
    }

    /// Applies the registered migrations up to and including `target`.
    /// - Throws: `FerryError.unknownMigration` when `target` is not registered,
    ///   `FerryError.databaseBeyondMigration` when the database applied a later migration, and
    ///   what `migrate(_:)` throws.
    @discardableResult
    public func migrate(_ db: MigrationConnection, upTo target: String) throws -> MigrationReport {
        try migrate(db.connection, upTo: target)
    }

    /// `migrate(_:upTo:)` on a connection of this package (its tests and the CLI).
    @discardableResult
    package func migrate(_ db: Connection, upTo target: String) throws -> MigrationReport {
        try FerryError.surfacing { try run(db, upTo: target) }
    }

    /// Applies every pending migration on the pool's writer.
    @discardableResult
    package func migrate(_ pool: DatabasePool) throws -> MigrationReport {
        try FerryError.surfacing { try pool.writeWithoutTransaction { db in try run(db, upTo: nil) } }
    }

    /// Applies the pending migrations up to `target` on the pool's writer.
    @discardableResult
    package func migrate(_ pool: DatabasePool, upTo target: String) throws -> MigrationReport {
        try FerryError.surfacing { try pool.writeWithoutTransaction { db in try run(db, upTo: target) } }
    }

    /// Async form of `migrate(_:)`: runs on the pool's writer thread; cancelling the task
    /// interrupts and rolls back the running migration (earlier ones stay applied).
    @discardableResult
    package func migrate(_ pool: DatabasePool) async throws -> MigrationReport {
        try await FerryError.surfacing { try await pool.writeWithoutTransaction { db in try self.run(db, upTo: nil) } }
    }

    /// Async form of `migrate(_:upTo:)`.
    @discardableResult
    package func migrate(_ pool: DatabasePool, upTo target: String) async throws -> MigrationReport {
        try await FerryError.surfacing { try await pool.writeWithoutTransaction { db in try self.run(db, upTo: target) } }
    }

    // MARK: Execution

    func run(_ db: Connection, upTo requestedTarget: String?) throws -> MigrationReport {
        guard !db.isInTransaction else {
            throw FerryError.misuse("migrate must run outside a transaction: each migration needs its own, and foreign keys can only be switched outside one")
        }
        if let requestedTarget, index(of: requestedTarget) == nil {
            throw FerryError.unknownMigration(id: requestedTarget)
        }
        guard let target = requestedTarget ?? registered.last?.identifier, let targetIndex = index(of: target) else {
            return MigrationReport()  // nothing registered
        }
        var report = MigrationReport()

        if eraseDatabaseOnSchemaChange {
            let needsErase = try db.transaction(.deferred) { try hasSchemaChanges(db) }
            if needsErase {
                schemaLogger.warning("schema migrations changed: erasing the database (eraseDatabaseOnSchemaChange)")
                try db.eraseDatabase()
                report.erasedDatabase = true
            }
        }

        try SchemaMigrationLog.create(on: db)

        if verifiesChecksums, let changed = try changedMigrations(db).first {
            throw FerryError.shippedMigrationChanged(id: changed)
        }

        let applied = try appliedIdentifiers(db)
        if let lastApplied = registered.lastIndex(where: { applied.contains($0.identifier) }), lastApplied > targetIndex {
            throw FerryError.databaseBeyondMigration(target: target, lastApplied: registered[lastApplied].identifier)
        }

        for migration in registered[...targetIndex] {
            // Nothing to do for an applied migration without leftover merged identifiers.
            if applied.contains(migration.identifier) && migration.mergedIdentifiers.isDisjoint(with: applied) { continue }
            if let outcome = try execute(migration, db) {
                report.applied.append(outcome.applied)
                report.lintFindings += outcome.findings
            }
        }
        return report
    }

    private struct Outcome {
        var applied: MigrationReport.Applied
        var findings: [SchemaLintFinding]
    }

    /// Runs one migration with its foreign-key policy. Returns nil when, inside its transaction, it
    /// turned out to be applied already (another process migrated concurrently).
    private func execute(_ migration: Migration, _ db: Connection) throws -> Outcome? {
        let foreignKeysOn = try db.scalar("PRAGMA foreign_keys", as: Int.self) == 1
        let policy: Migration.ForeignKeyPolicy = foreignKeysOn ? migration.foreignKeyPolicy : .immediate
        switch policy {
        case .immediate:
            return try runInTransaction(migration, db, foreignKeysEnforced: foreignKeysOn, checkForeignKeys: false)
        case .deferred, .disabled:
            // SQLite ignores PRAGMA foreign_keys inside a transaction: switch it outside.
            try db.execute("PRAGMA foreign_keys = OFF")
            let result: Result<Outcome?, any Error> = Result {
                try runInTransaction(migration, db, foreignKeysEnforced: false, checkForeignKeys: policy == .deferred)
            }
            try db.execute("PRAGMA foreign_keys = ON")
            return try result.get()
        }
    }

    private func runInTransaction(_ migration: Migration, _ db: Connection, foreignKeysEnforced: Bool, checkForeignKeys: Bool) throws -> Outcome? {
        try db.transaction(.immediate) { () throws -> Outcome? in
            // Re-read under the write lock: another connection may have migrated meanwhile.
            let applied = try appliedIdentifiers(db)
            let appliedMerged = migration.mergedIdentifiers.intersection(applied)
            if applied.contains(migration.identifier) {
                try SchemaMigrationLog.remove(appliedMerged, on: db)
                return nil
            }

            var findings: [SchemaLintFinding] = []
            if lintMode != .off, let steps = migration.lintedSteps(appliedMerged: appliedMerged) {
                let all = try SchemaLint.lint(steps: steps, name: "migration \"\(migration.identifier)\"", db: db, foreignKeysEnforced: foreignKeysEnforced,
                                              allowances: migration.allowances)
                if lintMode == .enforce, let refusal = all.first(where: \.isRefusal) {
                    throw FerryError.unsafeMigration(id: migration.identifier, rule: refusal.rule,
                                                     statement: refusal.statement, advice: refusal.message + " " + refusal.advice)
                }
                findings = all
                for finding in all {
                    schemaLogger.warning("migration \(migration.identifier): \(finding)")
                }
            }

            let clock = ContinuousClock()
            let start = clock.now
            try migration.runBody(db, appliedMerged: appliedMerged)
            let elapsed = start.duration(to: clock.now)
            let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15

            try SchemaMigrationLog.remove(appliedMerged, on: db)
            let replaced = appliedMerged.sorted()
            try SchemaMigrationLog.recordApplied(identifier: migration.identifier, milliseconds: milliseconds, checksum: migration.checksum,
                                                 kind: migration.kind, replaced: replaced,
                                                 allowances: migration.allowances.map { "\($0.rule): \($0.reason)" }, on: db)

            // Step 10 of SQLite's table-rebuild procedure: verify before commit.
            if checkForeignKeys { try ForeignKeyCheck.throwFirstViolation(db) }

            schemaLogger.debug("applied migration \(migration.identifier) in \(milliseconds) ms")
            return Outcome(
                applied: .init(identifier: migration.identifier, duration: elapsed, replaced: replaced),
                findings: findings)
        }
    }
}
