import ArgumentParser
import Foundation
import Ferry

/// `ferry lint MIGRATIONS.sql...` (or directories of `.sql` files, linted in name order): runs the
/// schema safety lint (`SchemaLint.commandLine(arguments:)`) and prints each finding with its rule.
/// Exits 1 when a rule refuses a statement (or, with `--strict`, on any finding), 2 on bad input.
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
            var arguments: [String] = []
            if let database { arguments += ["--database", database] }
            if let foreignKeys { arguments += ["--foreign-keys", foreignKeys] }
            for allowance in allow { arguments += ["--allow", allowance] }
            arguments += files.map { $0.hasPrefix("-") ? "./" + $0 : $0 }
            let (status, output) = SchemaLint.commandLine(arguments: arguments)
            let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if status == 2 {
                // Usage or I/O error: print the lines before it, then the error itself on one line.
                let errorIndex = lines.firstIndex { $0.hasPrefix("error: ") } ?? lines.startIndex
                print(lines[..<errorIndex].joined(separator: "\n"), terminator: errorIndex > 0 ? "\n" : "")
                let message = errorIndex < lines.count ? String(lines[errorIndex].dropFirst("error: ".count)) : "lint failed"
                throw CLIError(message, status: 2)
            }
            print(output, terminator: "")
            if status != 0 {
                throw CLIError("the lint refused statements: \(lines.last { !$0.isEmpty } ?? "")", status: status)
            }
            let warnings = lines.filter { $0.contains("] warning: ") }.count
            if strict && warnings > 0 {
                throw CLIError("\(warnings) warning(s) and --strict given")
            }
        }
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
