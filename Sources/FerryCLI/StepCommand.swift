#if CommandLineTool
import ArgumentParser
import Foundation
import Ferry

/// `ferry step DB [--key K] [--count N]`: runs N migration batches and prints what each did.
struct StepCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "step",
        abstract: "Run migration batches one by one and print what each did."
    )

    @OptionGroup var target: DatabaseOptions

    @Option(help: "How many batches to run.")
    var count: Int = 1

    @Option(name: .customLong("budget-ms"), help: "The time budget of one batch, in milliseconds (default: the plan's, or 10).")
    var budgetMilliseconds: Int?

    func validate() throws {
        guard count >= 1 else { throw ValidationError("--count must be at least 1") }
        if let budgetMilliseconds, budgetMilliseconds < 1 { throw ValidationError("--budget-ms must be at least 1") }
    }

    func run() async throws {
        try await reportingErrors {
            // Batches one by one: a step does not go on while nobody else writes (as in `ferry run`).
            let opened = try target.open(options: .init(yieldingStepLimit: nil))
            defer { opened.database.close() }
            let budget = budgetMilliseconds.map { Duration.milliseconds($0) } ?? opened.planFile?.schedule.budget ?? .milliseconds(10)
            for index in 1...count {
                guard let report = try opened.database.step(budget: budget) else {
                    print("step \(index): nothing left to do: every table is migrated and its source cleaned")
                    break
                }
                print("step \(index): \(Self.describe(report))")
            }
        }
    }

    /// `move messages: 512 row(s) moved, 488 left, 1.23 ms`.
    static func describe(_ report: StepReport) -> String {
        if report.kind == .checkpoint {
            return String(format: "checkpoint: waited %.2f ms for the WAL to be checkpointed, nothing moved", report.elapsed / .milliseconds(1))
        }
        var text = "\(report.kind.rawValue) \(report.table): "
        switch report.kind {
        case .move:
            if report.tableFinished {
                text += report.rowsMoved > 0 ? "\(report.rowsMoved) row(s) moved, table finished" : "table finished"
            } else {
                text += "\(report.rowsMoved) row(s) moved"
                if report.rowsQuarantined > 0 { text += ", \(report.rowsQuarantined) quarantined" }
                text += ", \(report.rowsLeft) left"
            }
        case .cleanup:
            if report.sourceRowsDeleted == 0 && !report.sourceCleaned {
                text += "counting the source's rows before deleting"
            } else {
                text += "\(report.sourceRowsDeleted) source row(s) deleted" + (report.sourceCleaned ? ", source cleaned" : "")
            }
        case .checkpoint:
            break
        }
        text += String(format: ", %.2f ms", report.elapsed / .milliseconds(1))
        return text
    }
}
#endif
