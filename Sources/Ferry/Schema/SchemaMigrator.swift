import FerrySQLite
/// Versioned schema migrations: ordered, named, each applied once in its own transaction, with
/// checksums, foreign-key checks and a safety lint.
///
/// ```swift
/// var migrator = SchemaMigrator()
/// try migrator.registerMigration("v1", sql: """
///     CREATE TABLE author(id INTEGER PRIMARY KEY, name TEXT);
///     """)
/// try migrator.registerMigration("v2", steps: [
///     .addColumnIfMissing(table: "author", column: "birthYear", definition: "INTEGER"),
/// ])
/// try migrator.migrate(pool)                    // or migrate(connection), or `await` on a pool
/// ```
///
/// A migrator is a value: copy it and register more migrations to derive a longer one. Migrations
/// run in registration order. Each runs in its own `BEGIN IMMEDIATE` transaction together with the
/// row that records it in the bookkeeping table (`bookkeepingTable`); the first failure rolls back that
/// migration only, later ones do not run, and the error is thrown. See `Docs/SchemaMigrations.md`.
public struct SchemaMigrator: Sendable {
    /// How a migration checks foreign keys (when the connection enforces them).
    public enum ForeignKeyChecks: String, Sendable, Hashable {
        /// The default: foreign keys are off while the migration runs (SQLite's procedure for
        /// table rebuilds), then a full `PRAGMA foreign_key_check` runs before commit and a
        /// violation fails the migration with `FerryError.foreignKeyViolation`.
        case deferred
        /// Foreign keys stay on: a violating statement fails at once, and `ON DELETE` actions
        /// fire. Faster on large databases; never use it for table rebuilds.
        case immediate
    }

    /// What the safety lint does with the findings of SQL migrations.
    public enum LintMode: String, Sendable, Hashable {
        /// Refusing rules stop the migration (unless it opts out with a reason). The default.
        case enforce
        /// Findings are logged and reported, nothing is refused.
        case warn
        /// The lint does not run.
        case off
    }

    /// Development reset: before migrating, when already-applied migrations changed (removed or
    /// renamed identifiers, changed checksums, or a schema that differs from replaying them on a
    /// scratch database), erase the database and migrate from scratch. Never enable it in release
    /// builds: it deletes every row. Default false.
    public var eraseDatabaseOnSchemaChange = false

    /// When true (the default), `migrate` throws `FerryError.shippedMigrationChanged(id:)` when an
    /// applied migration's recorded checksum differs from its registered declaration.
    public var verifiesChecksums = true

    /// What the safety lint does. Default `.enforce`.
    public var lintMode: LintMode = .enforce

    var deferredForeignKeyChecksDisabled = false
    var registered: [Migration] = []

    /// The name of the bookkeeping table (in `main`).
    public static var bookkeepingTable: String { SchemaMigrationLog.table }

    /// An empty migrator.
    public init() {}

    /// A copy of the migrator in which migrations registered from now on with
    /// `foreignKeyChecks: .deferred` skip the final foreign-key check (they still run with foreign
    /// keys off). Migrations registered before keep their checks; `.immediate` ones are unaffected.
    ///
    /// This is the unique opportunity to commit corrupt data: check the tables you touch yourself.
    public func disablingDeferredForeignKeyChecks() -> SchemaMigrator {
        var copy = self
        copy.deferredForeignKeyChecksDisabled = true
        return copy
    }

    /// The registered migration identifiers, in registration order.
    public var migrations: [String] { registered.map(\.identifier) }

    // MARK: Registration

    /// Registers a migration declared as SQL (a script of one or more statements).
    ///
    /// Its checksum covers the SQL (ignoring whitespace and comments) and `foreignKeyChecks`.
    /// The lint inspects it before it runs; `allowing` opts out of refusing rules, with reasons.
    /// - Throws: `FerryError.duplicateMigration` when the identifier is taken,
    ///   `FerryError.invalidArguments` for an empty identifier or an allowance without a reason.
    public mutating func registerMigration(
        _ identifier: String, foreignKeyChecks: ForeignKeyChecks = .deferred,
        allowing allowances: [SchemaLintAllowance] = [], sql: String
    ) throws(FerryError) {
        try registerMigration(identifier, foreignKeyChecks: foreignKeyChecks, allowing: allowances, steps: [.sql(sql)])
    }

    /// Registers a migration declared as steps (SQL and idempotent helpers).
    public mutating func registerMigration(
        _ identifier: String, foreignKeyChecks: ForeignKeyChecks = .deferred,
        allowing allowances: [SchemaLintAllowance] = [], steps: [SchemaStep]
    ) throws(FerryError) {
        try append(Migration(
            identifier: identifier, mergedIdentifiers: [], declaredForeignKeyChecks: foreignKeyChecks,
            foreignKeyPolicy: policy(for: foreignKeyChecks), body: .steps(steps),
            checksum: Migration.checksum(of: steps, foreignKeyChecks: foreignKeyChecks),
            allowances: allowances))
    }

    /// Registers a SQL migration that replaces older migrations (squashing history).
    ///
    /// On a database that applied some of `merging`, only the others run, then `sql`; the merged
    /// identifiers are then replaced by `identifier` in the bookkeeping table. On a database that
    /// already applied `identifier`, leftover merged identifiers are removed. The recorded checksums
    /// of merged migrations are verified against their declared SQL.
    public mutating func registerMigration(
        _ identifier: String, foreignKeyChecks: ForeignKeyChecks = .deferred,
        allowing allowances: [SchemaLintAllowance] = [], merging: [MergedMigration], sql: String
    ) throws(FerryError) {
        try registerMigration(identifier, foreignKeyChecks: foreignKeyChecks, allowing: allowances, merging: merging, steps: [.sql(sql)])
    }

    /// Registers a migration declared as steps that replaces older migrations.
    public mutating func registerMigration(
        _ identifier: String, foreignKeyChecks: ForeignKeyChecks = .deferred,
        allowing allowances: [SchemaLintAllowance] = [], merging: [MergedMigration], steps: [SchemaStep]
    ) throws(FerryError) {
        var seen = Set<String>()
        for merged in merging {
            guard merged.identifier != identifier else {
                throw .invalidArguments("migration \"\(identifier)\" cannot merge itself; put its SQL in `sql:`")
            }
            guard seen.insert(merged.identifier).inserted else { throw .duplicateMigration(id: merged.identifier) }
        }
        try append(Migration(
            identifier: identifier, mergedIdentifiers: seen, declaredForeignKeyChecks: foreignKeyChecks,
            foreignKeyPolicy: policy(for: foreignKeyChecks), body: .mergedSteps(merged: merging, own: steps),
            checksum: Migration.checksum(of: steps, foreignKeyChecks: foreignKeyChecks),
            allowances: allowances))
    }

    /// Registers a migration written in Swift.
    ///
    /// Code cannot be checksummed: pass `checksum:` (any version string you change whenever you
    /// change the code, e.g. `"1"`) to have changes detected, or leave it nil to record the
    /// migration as unchecked. The lint does not see what a closure executes.
    public mutating func registerMigration(
        _ identifier: String, foreignKeyChecks: ForeignKeyChecks = .deferred, checksum: String? = nil,
        migrate: @escaping @Sendable (MigrationConnection) throws -> Void
    ) throws(FerryError) {
        try append(Migration(
            identifier: identifier, mergedIdentifiers: [], declaredForeignKeyChecks: foreignKeyChecks,
            foreignKeyPolicy: policy(for: foreignKeyChecks), body: .closure({ db, _ in try migrate(db) }),
            checksum: checksum.map { Self.appChecksum($0, foreignKeyChecks) }, allowances: []))
    }

    /// Registers a Swift migration that replaces older migrations (GRDB's merged migrations).
    ///
    /// `migrate` receives the subset of `merging` the database already applied, so it can skip
    /// their work. `merging` may contain `identifier` itself (it is ignored).
    public mutating func registerMigration(
        _ identifier: String, foreignKeyChecks: ForeignKeyChecks = .deferred, merging: Set<String>,
        checksum: String? = nil, migrate: @escaping @Sendable (MigrationConnection, Set<String>) throws -> Void
    ) throws(FerryError) {
        var merged = merging
        merged.remove(identifier)
        try append(Migration(
            identifier: identifier, mergedIdentifiers: merged, declaredForeignKeyChecks: foreignKeyChecks,
            foreignKeyPolicy: policy(for: foreignKeyChecks), body: .closure(migrate),
            checksum: checksum.map { Self.appChecksum($0, foreignKeyChecks) }, allowances: []))
    }

    /// Registers an online rebuild, carried out by `executor` (default: `FerryRebuildExecutor`, Ferry's
    /// data-migration engine; see `OnlineRebuild`). Its checksum covers the rebuild declaration.
    public mutating func registerOnlineRebuild(
        _ identifier: String, _ rebuild: OnlineRebuild, foreignKeyChecks: ForeignKeyChecks = .deferred,
        executor: any OnlineRebuildExecutor = FerryRebuildExecutor()
    ) throws(FerryError) {
        try append(Migration(
            identifier: identifier, mergedIdentifiers: [], declaredForeignKeyChecks: foreignKeyChecks,
            foreignKeyPolicy: policy(for: foreignKeyChecks), body: .onlineRebuild(rebuild, executor),
            checksum: Migration.checksum(of: rebuild, foreignKeyChecks: foreignKeyChecks), allowances: []))
    }

    static func appChecksum(_ version: String, _ foreignKeyChecks: ForeignKeyChecks) -> String {
        "app:" + version + (foreignKeyChecks == .deferred ? "" : ";foreign-keys=\(foreignKeyChecks.rawValue)")
    }

    private func policy(for checks: ForeignKeyChecks) -> Migration.ForeignKeyPolicy {
        switch checks {
        case .immediate: return .immediate
        case .deferred: return deferredForeignKeyChecksDisabled ? .disabled : .deferred
        }
    }

    private mutating func append(_ migration: Migration) throws(FerryError) {
        guard !migration.identifier.isEmpty else {
            throw .invalidArguments("a migration identifier cannot be empty")
        }
        let taken = knownIdentifiers
        if taken.contains(migration.identifier) { throw .duplicateMigration(id: migration.identifier) }
        if let reused = migration.mergedIdentifiers.first(where: taken.contains) { throw .duplicateMigration(id: reused) }
        for allowance in migration.allowances where allowance.reason.allSatisfy(\.isWhitespace) {
            throw .invalidArguments("migration \"\(migration.identifier)\" allows rule \(allowance.rule) without a reason; say why it is safe")
        }
        registered.append(migration)
    }

    /// Registered identifiers and the identifiers merged migrations replace.
    var knownIdentifiers: Set<String> {
        var ids = Set<String>()
        for m in registered {
            ids.insert(m.identifier)
            ids.formUnion(m.mergedIdentifiers)
        }
        return ids
    }

    func index(of identifier: String) -> Int? {
        registered.firstIndex { $0.identifier == identifier }
    }
}
