#if CommandLineTool
import ArgumentParser
import Foundation
import Ferry

/// `ferry status DB [--key K] [--count] [--json]`: the registered plan and where each table stands.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the registered migration plan and the progress of each table."
    )

    @OptionGroup var target: DatabaseOptions

    @Flag(help: "Print one JSON document.")
    var json = false

    @Flag(help: "Count the rows left exactly (scans the pending source rows) instead of estimating them.")
    var count = false

    func run() async throws {
        try await reportingErrors {
            let opened = try target.open()
            defer { opened.database.close() }
            let progress = try opened.database.progress(countingRowsLeft: count)
            if json {
                print(try Self.json(progress, path: opened.path))
            } else {
                print(Self.text(progress, path: opened.path), terminator: "")
            }
        }
    }

    /// Seconds left for `rowsLeft` rows at `rate` rows per second, nil when unknown.
    static func eta(rowsLeft: Int64, finished: Bool, rate: Double) -> Double? {
        if finished || rowsLeft == 0 { return 0 }
        return rate > 0 ? Double(rowsLeft) / rate : nil
    }

    /// `12.3 s`, `4 min 5 s`, or `unknown`.
    static func formatETA(_ seconds: Double?) -> String {
        guard let seconds else { return "unknown" }
        if seconds < 60 { return String(format: "%.1f s", seconds) }
        let total = Int(seconds.rounded())
        if total < 3600 { return "\(total / 60) min \(total % 60) s" }
        return "\(total / 3600) h \(total % 3600 / 60) min"
    }

    /// `messages <- /path/legacy.db:messages where x < 3`.
    static func describeMapping(_ table: MigrationProgress.Table) -> String {
        var text = "\(table.name) <- \(table.sourcePath.map { "\($0):" } ?? "")\(table.sourceTable)"
        if let filter = table.filter { text += " where \(filter)" }
        return text
    }

    /// The human-readable report.
    static func text(_ progress: MigrationProgress, path: String) -> String {
        guard !progress.tables.isEmpty else { return "\(path): no migration registered\n" }
        let finished = progress.tables.filter { $0.state == .finished }.count
        var out = "\(path): \(progress.isFinished ? "migrated" : "migrating"), \(finished) of \(progress.tables.count) table(s) finished, "
            + "\(progress.rowsMoved) row(s) moved, \(progress.rowsLeft) left\(progress.rowsLeftIsExact ? "" : " (estimated)")\n"
        for table in progress.tables {
            out += "  \(describeMapping(table))\n"
            var line = "    \(table.state.rawValue): \(table.rowsMoved) moved, \(table.rowsLeft) left"
            if !table.rowsLeftIsExact { line += " (estimated)" }
            if table.rowsQuarantined > 0 { line += ", \(table.rowsQuarantined) quarantined" }
            if table.state != .finished { line += ", ETA \(formatETA(table.estimatedTimeLeft.map { $0 / .seconds(1) }))" }
            if let error = table.lastError { line += ", last step failed: \(error)" }
            out += line + "\n"
        }
        return out
    }

    /// The JSON report: one document.
    static func json(_ progress: MigrationProgress, path: String) throws -> String {
        func orNull(_ value: Any?) -> Any { value ?? NSNull() }
        let tables: [[String: Any]] = progress.tables.map { table in
            [
                "target": table.name,
                "source": table.sourceTable,
                "sourcePath": orNull(table.sourcePath),
                "filter": orNull(table.filter),
                "state": table.state.rawValue,
                "rowsMoved": table.rowsMoved,
                "rowsQuarantined": table.rowsQuarantined,
                "rowsLeft": table.rowsLeft,
                "rowsLeftExact": table.rowsLeftIsExact,
                "rowsPerSecond": table.rowsPerSecond,
                "etaSeconds": orNull(table.estimatedTimeLeft.map { $0 / .seconds(1) }),
                "lastError": orNull(table.lastError.map { "\($0)" }),
            ]
        }
        let document: [String: Any] = [
            "database": path,
            "registered": !progress.tables.isEmpty,
            "finished": progress.isFinished,
            "rowsMoved": progress.rowsMoved,
            "rowsLeft": progress.rowsLeft,
            "rowsLeftExact": progress.rowsLeftIsExact,
            "rowsPerSecond": progress.rowsPerSecond,
            "etaSeconds": orNull(progress.estimatedTimeLeft.map { $0 / .seconds(1) }),
            "tables": tables,
        ]
        let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}
#endif
