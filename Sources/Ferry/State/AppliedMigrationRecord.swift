import FerrySQLite
/// One row of `main.ferry_schema_migrations`: a migration the database applied.
public struct AppliedMigrationRecord: Sendable, Hashable {
    /// The migration identifier.
    public var identifier: String
    /// When it was applied (UTC, ISO 8601 with milliseconds, e.g. `2026-01-31T12:00:00.123Z`).
    public var appliedAt: String
    /// How long its body took (recorded in milliseconds).
    public var duration: Duration
    /// The checksum of its declaration (`sha256v1:<hex>`, `app:<version>`), or nil when unchecked.
    public var checksum: String?
    /// `sql`, `closure` or `online-rebuild`.
    public var kind: String
    /// The older identifiers it replaced (merged migrations).
    public var replaced: [String]
    /// The lint rules it opted out of, with the reasons (`rule: reason`), one per line; nil if none.
    public var lintAllowances: String?
}
