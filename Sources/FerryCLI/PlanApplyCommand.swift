#if CommandLineTool
import ArgumentParser
import Foundation
import Ferry

/// `ferry plan apply PLAN.json`: validates a plan file and registers its plan in the target
/// database. Idempotent: applying the registered plan again changes nothing; a plan that conflicts
/// with the registered one (another source or filter for a table in flight) is refused.
struct PlanApplyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Validate a plan file and register its plan in the target database (idempotent)."
    )

    @Argument(help: ArgumentHelp("The plan file.", valueName: "PLAN.json"))
    var planPath: String

    @OptionGroup var diagnostics: DiagnosticsOptions

    func run() async throws {
        try await reportingErrors {
            let file = try MigrationPlanFile.loadForCommand(planPath)
            let before = FileManager.default.fileExists(atPath: file.targetPath)
                ? try PlanRegistration.registeredTargets(path: file.targetPath, cipher: file.targetCipher) ?? []
                : []
            let database = try PlanRegistration.open(file)
            defer { database.close() }
            let progress = try database.progress()
            var added = 0
            for (source, mapping) in file.plan.mappings {
                let isNew = !before.contains(mapping.target.lowercased())
                if isNew { added += 1 }
                let table = progress.tables.first { $0.name.lowercased() == mapping.target.lowercased() }
                let from: String
                switch source.location {
                case .targetFile: from = mapping.source
                case .file(let path): from = "\(path):\(mapping.source)"
                }
                var line = "\(isNew ? "registered" : "already registered") \(mapping.target) <- \(from)"
                if let filter = mapping.filter { line += " where \(filter)" }
                if let table { line += " (\(table.state.rawValue), \(table.rowsMoved) moved, \(table.rowsLeft) left)" }
                print(line)
            }
            print(added == 0 ? "plan already registered in \(file.targetPath); nothing changed"
                             : "registered \(added) table(s) in \(file.targetPath)")
        }
    }
}
#endif
