#if CommandLineTool
import ArgumentParser
import Foundation
import Ferry

/// `ferry verify DB [--key K]`: checks that every source row that moved is in its target exactly
/// once with the source's values, and that the target passes `PRAGMA integrity_check`.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check the migrated rows against their sources and the target's integrity.",
        discussion: """
            Every source row that matches a mapping and has moved must be in the target under the same \
            rowid with the same values. Tables whose source was already cleaned can only be checked for \
            the target's integrity and row counts. Rows the app updated, deleted or replaced through Ferry \
            after they moved are recorded as it writes them and not compared (they are counted apart); \
            a row changed behind Ferry's back is a difference.
            """
    )

    @OptionGroup var target: DatabaseOptions

    func run() async throws {
        try await reportingErrors {
            let opened = try target.open()
            defer { opened.database.close() }
            let verification = try opened.database.verify()
            print("integrity check: \(verification.integrityCheck.joined(separator: "; "))")
            if verification.tables.isEmpty { print("\(opened.path): no migration registered") }
            for table in verification.tables {
                var line = "\(table.name) <- \(table.sourceTable)\(table.filter.map { " where \($0)" } ?? "") (\(table.state.rawValue)): "
                switch table.scope {
                case .rows:
                    line += "\(table.rowsChecked) moved row(s) compared"
                    if table.isConsistent {
                        line += ", OK"
                    } else {
                        line += ", \(table.rowsMissing) missing, \(table.rowsDiffering) differing"
                            + " (source rowids \(table.sampleRowids.map(String.init).joined(separator: ", "))\(table.rowsMissing + table.rowsDiffering > Int64(table.sampleRowids.count) ? ", ..." : ""))"
                    }
                    if table.state == .finished && table.rowsChecked < table.rowsMoved {
                        line += "; \(table.rowsMoved - table.rowsChecked) moved row(s) already deleted from the source were not compared"
                    }
                case .countsOnly:
                    line += "source cleaned: verification limited to the target's integrity and counts: "
                        + "\(table.targetRows) row(s) in the target, \(table.rowsMoved) moved"
                }
                if table.rowsEditedByApp > 0 { line += ", \(table.rowsEditedByApp) edited by the app since they moved (not compared)" }
                if table.rowsQuarantined > 0 { line += ", \(table.rowsQuarantined) quarantined" }
                if table.rowsUnaccounted > 0 {
                    line += "; \(table.rowsUnaccounted) source row(s) unaccounted for (they match the mapping but never moved, or moved rows left the source): cleanup refuses to run"
                }
                print(line)
            }
            guard verification.isConsistent else {
                let bad = verification.tables.filter { !$0.isConsistent }
                if verification.integrityCheck != ["ok"] {
                    throw CLIError("verification failed: the integrity check of \(opened.path) failed")
                }
                let rows = bad.reduce(Int64(0)) { $0 + $1.rowsMissing + $1.rowsDiffering + $1.rowsUnaccounted }
                throw CLIError("verification failed: \(rows) row(s) missing, differing or unaccounted for in \(bad.map(\.name).joined(separator: ", "))")
            }
            print("verification passed")
        }
    }
}
#endif
