#if CommandLineTool
import ArgumentParser
import Foundation
import Ferry

/// `ferry lint MIGRATIONS.sql...` (or directories of `.sql` files, linted in name order): runs the
/// schema safety lint (`SchemaLint.lint(files:databasePath:foreignKeyChecks:allowances:)`) and prints
/// each finding with its rule.
/// Exits 1 when a rule refuses a statement (or, with `--strict`, on any finding), 2 on bad input
/// (a file holding a NUL byte or bytes that are not UTF-8 among it: never a pass).
struct LintCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lint",
        abstract: "Lint SQL migration files for statements that lose user data."
    )

    @OptionGroup var diagnostics: DiagnosticsOptions

    @Argument(help: ArgumentHelp("Migration files, or directories of .sql files (linted in name order).", valueName: "MIGRATIONS.sql"))
    var paths: [String]

    @Option(help: "Check data-dependent rules against this database (opened read-only).")
    var database: String?

    @Option(name: .customLong("foreign-keys"), help: "How the migrations run: deferred (default) or immediate.")
    var foreignKeys: String?

    @Option(help: ArgumentHelp("Opt out of a rule, with the reason.", valueName: "RULE=REASON"))
    var allow: [String] = []

    @Flag(help: "Fail on warnings too.")
    var strict = false

    func run() async throws {
        try await reportingErrors {
            let files = try Self.expand(paths)
            if let database { try DatabaseOptions.requireDatabaseFile(database) }
            var checks = SchemaMigrator.ForeignKeyChecks.deferred
            if let foreignKeys {
                guard let mode = SchemaMigrator.ForeignKeyChecks(rawValue: foreignKeys) else {
                    throw CLIError("--foreign-keys needs deferred or immediate", status: 2)
                }
                checks = mode
            }
            let allowances = try allow.map(Self.allowance)
            var report = SchemaLintReport(files: [])
            for file in files {
                do {
                    report.files += try SchemaLint.lint(files: [.file(file)], databasePath: database, foreignKeyChecks: checks,
                                                        allowances: allowances).files
                } catch {
                    if let error = error as? FerryError, case .unreadableSQL = error { throw CLIError(error.description, status: 2) }  // names the file
                    throw CLIError("\(file): \(error)", status: 2)
                }
                for finding in report.files.last?.findings ?? [] { print("\(file): \(finding)") }
            }
            let summary = "\(report.files.count) file(s), \(report.findings.count) finding(s), \(report.refusals) refused"
            print(summary)
            if report.refusals > 0 { throw CLIError("the lint refused statements: \(summary)", status: 1) }
            if strict && report.warnings > 0 { throw CLIError("\(report.warnings) warning(s) and --strict given") }
        }
    }

    /// An `--allow RULE=REASON` option as an allowance.
    static func allowance(_ spec: String) throws -> SchemaLintAllowance {
        guard let equals = spec.firstIndex(of: "="), let rule = SchemaLintRule(rawValue: String(spec[..<equals])),
              !spec[spec.index(after: equals)...].allSatisfy(\.isWhitespace)
        else {
            throw CLIError("--allow needs RULE=REASON with a known rule and a reason (rules: "
                + SchemaLintRule.allCases.map(\.rawValue).joined(separator: ", ") + ")", status: 2)
        }
        return .allow(rule, because: String(spec[spec.index(after: equals)...]))
    }

    /// The files to lint: each file as given, each directory's `.sql` files in name order.
    static func expand(_ paths: [String]) throws -> [String] {
        var files: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CLIError("no such file or directory: \(path)", status: 2)
            }
            if isDirectory.boolValue {
                let names = try FileManager.default.contentsOfDirectory(atPath: path)
                    .filter { $0.lowercased().hasSuffix(".sql") }
                    .sorted { $0.compare($1, options: .numeric) == .orderedAscending }
                guard !names.isEmpty else { throw CLIError("no .sql files in \(path)", status: 2) }
                files += names.map { URL(fileURLWithPath: path).appendingPathComponent($0).path }
            } else {
                files.append(path)
            }
        }
        return files
    }
}
#endif
