import Foundation

extension SchemaLint {
    /// The usage text of the lint command.
    public static let commandLineUsage = """
        usage: lint-migrations [--database PATH] [--foreign-keys deferred|immediate] [--allow RULE=REASON]... FILE...
          Lints SQL migration files (one migration per file, `-` reads standard input) and prints one line
          per finding. Exit status: 0 when nothing is refused, 1 when a rule refuses a statement, 2 on
          usage or I/O errors.
          --database PATH      check data-dependent rules against this database (opened read-only)
          --foreign-keys MODE  how the migrations run (default deferred; immediate enforces foreign keys)
          --allow RULE=REASON  opt out of a rule, with the reason (rules: \(SchemaLintRule.allCases.map(\.rawValue).joined(separator: ", ")))
        """

    /// Runs the lint as a command: parses `arguments` (without the program name), lints each file,
    /// and returns the exit status and the text to print. The `ferry` executable's command calls
    /// this; it is public so that any tool can embed the same behaviour.
    public static func commandLine(arguments: [String], readStandardInput: () -> String = {
        String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
    }) -> (status: Int32, output: String) {
        var databasePath: String?
        var checks = SchemaMigrator.ForeignKeyChecks.deferred
        var allowances: [SchemaLintAllowance] = []
        var files: [String] = []
        var index = 0
        func usage(_ message: String) -> (Int32, String) { (2, "error: \(message)\n\(commandLineUsage)\n") }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            func value() -> String? {
                guard index < arguments.count else { return nil }
                defer { index += 1 }
                return arguments[index]
            }
            switch argument {
            case "--help", "-h":
                return (0, commandLineUsage + "\n")
            case "--database":
                guard let path = value() else { return usage("--database needs a path") }
                databasePath = path
            case "--foreign-keys":
                guard let mode = value().flatMap(SchemaMigrator.ForeignKeyChecks.init(rawValue:)) else {
                    return usage("--foreign-keys needs deferred or immediate")
                }
                checks = mode
            case "--allow":
                guard let spec = value(), let equals = spec.firstIndex(of: "="),
                      let rule = SchemaLintRule(rawValue: String(spec[..<equals])),
                      !spec[spec.index(after: equals)...].allSatisfy(\.isWhitespace)
                else { return usage("--allow needs RULE=REASON with a known rule and a reason") }
                allowances.append(.allow(rule, because: String(spec[spec.index(after: equals)...])))
            default:
                if argument.hasPrefix("--") { return usage("unknown option \(argument)") }
                files.append(argument)
            }
        }
        guard !files.isEmpty else { return usage("no migration file given") }

        var database: Connection?
        if let databasePath {
            do {
                database = try Connection(path: databasePath, configuration: .init(readOnly: true, createIfMissing: false))
            } catch {
                return (2, "error: cannot open \(databasePath): \(error)\n")
            }
        }
        var output = ""
        var refusals = 0
        var total = 0
        for file in files {
            let sql: String
            if file == "-" {
                sql = readStandardInput()
            } else {
                guard let data = FileManager.default.contents(atPath: file) else {
                    return (2, output + "error: cannot read \(file)\n")
                }
                sql = String(decoding: data, as: UTF8.self)
            }
            do {
                let findings = try lint(sql, database: database, foreignKeyChecks: checks, allowances: allowances)
                for finding in findings {
                    output += "\(file): \(finding)\n"
                    if finding.isRefusal { refusals += 1 }
                }
                total += findings.count
            } catch {
                return (2, output + "error: \(file): \(error)\n")
            }
        }
        output += "\(files.count) file(s), \(total) finding(s), \(refusals) refused\n"
        return (refusals > 0 ? 1 : 0, output)
    }
}
