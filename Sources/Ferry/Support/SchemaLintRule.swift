import FerrySQLite
/// A rule of the schema safety lint.
///
/// Refusing rules stop a migration before it runs unless the migration opts out with
/// `.allow(rule, because: "reason")`; warning rules are reported and never stop anything.
public enum SchemaLintRule: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `DROP TABLE` of a table that holds rows (checked against the live database).
    case dropTableWithRows = "drop-table-with-rows"
    /// `ALTER TABLE ... DROP COLUMN`.
    case dropColumn = "drop-column"
    /// `ALTER TABLE ... ADD COLUMN ... NOT NULL` without a DEFAULT.
    case addNotNullColumnWithoutDefault = "add-not-null-column-without-default"
    /// A table rebuild (create new table, copy, drop old, rename) that copies fewer columns or rows
    /// than the old table holds.
    case rebuildDropsData = "rebuild-drops-data"
    /// Dropping a table (alone or in a rebuild) while foreign keys are enforced, when other tables
    /// reference it with `ON DELETE CASCADE`, `SET NULL` or `SET DEFAULT`: the drop deletes or
    /// rewrites their rows.
    case destructiveForeignKeyAction = "destructive-on-delete"
    /// `ALTER TABLE ... RENAME TO` or `RENAME COLUMN` (warning only).
    case rename = "rename"

    /// The rule's name, as messages and the bookkeeping show it.
    public var description: String { rawValue }

    /// True for rules that refuse a migration; false for warnings.
    public var refuses: Bool { self != .rename }
}

/// A migration's explicit opt-out of one lint rule, with the reason (recorded in the bookkeeping table).
public struct SchemaLintAllowance: Sendable, Hashable {
    /// The rule the migration may break.
    public let rule: SchemaLintRule
    /// Why it is safe here (required, non-empty).
    public let reason: String

    /// Allows one rule for one migration, with the reason.
    public static func allow(_ rule: SchemaLintRule, because reason: String) -> SchemaLintAllowance {
        SchemaLintAllowance(rule: rule, reason: reason)
    }
}
