/// One finding of the schema safety lint.
public struct SchemaLintFinding: Sendable, Hashable, CustomStringConvertible {
    /// The rule.
    public var rule: SchemaLintRule
    /// The statement, as written in the migration.
    public var statement: String
    /// What is wrong.
    public var message: String
    /// The safe pattern to use instead.
    public var advice: String
    /// The reason the migration gave for opting out of the rule, if it did.
    public var allowedBecause: String?

    /// True when the finding stops the migration (a refusing rule without an opt-out).
    public var isRefusal: Bool { rule.refuses && allowedBecause == nil }

    public var description: String {
        var text = "[\(rule)] \(isRefusal ? "refused" : "warning"): `\(statement)` - \(message) \(advice)"
        if let allowedBecause { text += " (allowed: \(allowedBecause))" }
        return text
    }
}

/// The schema safety lint (see `SchemaLintRule`).
public enum SchemaLint {
    /// Lints migration steps against a live database. Stub until the SQL front end lands.
    static func lint(steps: [SchemaStep], db: Connection, foreignKeysEnforced: Bool, allowances: [SchemaLintAllowance]) throws -> [SchemaLintFinding] {
        []
    }
}
