import FerrySQLite
import Foundation

/// What linting migration files found: each file's findings, in the order given.
public struct SchemaLintReport: Sendable, Hashable {
    /// One linted file (one migration per file).
    public struct File: Sendable, Hashable {
        /// The file as named (`-` for standard input).
        public var name: String
        /// Its findings, in statement order.
        public var findings: [SchemaLintFinding]
    }

    /// The files, in the order given.
    public var files: [File]

    /// A report of these files (the lint builds them; public for tools that merge reports).
    public init(files: [File]) { self.files = files }

    /// Every finding of every file.
    public var findings: [SchemaLintFinding] { files.flatMap(\.findings) }
    /// The findings that refuse a statement (no allowance given for their rule).
    public var refusals: Int { findings.filter(\.isRefusal).count }
    /// The findings of warning rules.
    public var warnings: Int { findings.filter { !$0.rule.refuses }.count }
}

/// A migration file to lint: a path, or standard input.
public enum SchemaLintSource: Sendable, Hashable {
    /// The file at this path.
    case file(String)
    /// Text already read (e.g. standard input), named as given in the report.
    case text(String, name: String)
}

extension SchemaLint {
    /// Lints migration files (one migration per file) in order.
    ///
    /// - Parameters:
    ///   - sources: the files.
    ///   - databasePath: a database to check the data-dependent rules against (opened read-only),
    ///     or nil to check the statements alone.
    ///   - foreignKeyChecks: how the migrations will run.
    ///   - allowances: rules the caller opts out of, each with its reason.
    /// - Throws: `FerryError.fileNotFound` for a file or database that does not exist, the
    ///   database's open errors, `FerryError.unreadableSQL` for a file holding a NUL byte or bytes
    ///   that are not UTF-8, and the lint's own errors (a statement that does not parse).
    public static func lint(files sources: [SchemaLintSource], databasePath: String? = nil,
                            foreignKeyChecks: SchemaMigrator.ForeignKeyChecks = .deferred,
                            allowances: [SchemaLintAllowance] = []) throws(FerryError) -> SchemaLintReport {
        var database: Connection?
        if let databasePath {
            database = try sqlite(Connection(path: databasePath, configuration: .init(readOnly: true, createIfMissing: false)))
        }
        defer { database?.close() }
        var report = SchemaLintReport(files: [])
        for source in sources {
            let (name, sql): (String, String)
            switch source {
            case .text(let text, let label):
                try SchemaLintInput.check(text, name: label)
                (name, sql) = (label, text)
            case .file(let path):
                guard let data = FileManager.default.contents(atPath: path) else { throw .fileNotFound(path: path) }
                (name, sql) = (path, try SchemaLintInput.text(of: [UInt8](data), name: path))
            }
            let findings = try lint(sql, name: name, database: database, foreignKeyChecks: foreignKeyChecks, allowances: allowances)
            report.files.append(.init(name: name, findings: findings))
        }
        return report
    }
}
