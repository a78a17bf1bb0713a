import Foundation

/// The human table (stdout) and the JSON object (`--json`).
enum ReportPrinter {
    static func json(_ report: BenchReport) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(report), as: UTF8.self)
    }

    static func human(_ report: BenchReport) -> String {
        var out: [String] = []
        out.append("ferry-bench  \(report.date)  Ferry \(report.ferryVersion)  \(report.engine)  \(report.cores) cores")
        out.append("data: \(grouped(report.sourceRows)) rows, \(report.options["rowWidth"] ?? "?") B/row, "
                   + "filter \(report.options["filter"] ?? "none") (\(grouped(report.matchingRows)) rows to move), "
                   + "source \(report.options["encryption"] ?? "?"), \(report.options["placement"] ?? "?"), index \(report.options["index"] ?? "?"), "
                   + "budget \(report.options["budget"] ?? "?") ms, source file \(String(format: "%.0f", Double(report.sourceFileBytes) / 1_048_576)) MB")
        out.append("")

        // Strategies
        out.append("Moving the rows (latency of each step or batch, ms)")
        var rows: [[String]] = [["strategy", "rows", "move s", "move rows/s", "cleanup s", "total s", "total rows/s", "p50", "p90", "p99", "p99.9", "max", "peak MB"]]
        for s in report.strategies {
            let l = s.allLatency
            rows.append([s.name, grouped(s.rows), f2(s.moveSeconds), grouped(Int(s.moveRowsPerSecond)) + (s.extrapolated ? "*" : ""),
                         s.cleanupSeconds.map(f2) ?? "-", f2(s.totalSeconds), grouped(Int(s.totalRowsPerSecond)) + (s.extrapolated ? "*" : ""),
                         l.map { f2($0.p50) } ?? "-", l.map { f2($0.p90) } ?? "-", l.map { f2($0.p99) } ?? "-", l.map { f2($0.p999) } ?? "-",
                         l.map { f2($0.max) } ?? "-", s.peakMemoryAboveIdle.map { String(format: "%.1f", Double($0) / 1_048_576) } ?? "-"])
        }
        out.append(table(rows))
        if report.strategies.contains(where: \.extrapolated) { out.append("  * time-capped run: rows/s extrapolated from the window") }
        for s in report.strategies {
            out.append("  \(s.name): \(s.title); latency = \(s.latencyKind)")
            if let move = s.moveLatency, let cleanup = s.cleanupLatency {
                out.append(String(format: "      move steps p50/p99/max %.2f/%.2f/%.2f ms, cleanup steps %.2f/%.2f/%.2f ms", move.p50, move.p99, move.max, cleanup.p50, cleanup.p99, cleanup.max))
            }
            for note in s.notes { out.append("      " + note) }
        }
        out.append("  peak MB = peak resident memory above the idle footprint while the strategy ran (VmHWM - VmRSS)")
        out.append("")

        // Ratios
        if let manual = report.strategy(.manual) {
            out.append("Ferry (step loop) against the baselines, rows/s ratios of the same run")
            var ratioRows: [[String]] = [["baseline", "move phase", "move + cleanup"]]
            for name in [StrategyName.floor, .keyset, .budgeted, .wcdb] {
                guard let b = report.strategy(name), b.moveRowsPerSecond > 0 else { continue }
                ratioRows.append([b.name, String(format: "%.2fx", manual.moveRowsPerSecond / b.moveRowsPerSecond),
                                  String(format: "%.2fx", manual.totalRowsPerSecond / b.totalRowsPerSecond)])
            }
            out.append(table(ratioRows))
            out.append("  a baseline deletes source rows in the same transactions, so its move phase is its whole run")
            out.append("")
        }

        // App cost
        if !report.appCost.isEmpty {
            out.append("App-side cost: table half migrated (no step running) vs a finished copy, ms")
            var costRows: [[String]] = [["operation", "runs", "migrating p50", "p99", "finished p50", "p99", "ratio", "limit", ""]]
            for op in report.appCost {
                costRows.append([op.name, String(op.iterations), f4(op.migrating.p50), f4(op.migrating.p99), f4(op.finished.p50), f4(op.finished.p99),
                                 String(format: "%.2fx", op.ratio), "≤ " + Targets.format(op.limit) + "x", op.ratio <= op.limit ? "PASS" : "MISS"])
            }
            out.append(table(costRows))
            for op in report.appCost {
                guard let moved = op.movedKeys, let pending = op.pendingKeys,
                      let movedFinished = op.movedKeysFinished, let pendingFinished = op.pendingKeysFinished,
                      movedFinished.p50 > 0, pendingFinished.p50 > 0 else { continue }
                out.append(String(format: "  %@ while migrating: moved keys p50 %.4f ms (%.2fx, %d runs), pending keys p50 %.4f ms (%.2fx, %d runs)",
                                  op.name, moved.p50, moved.p50 / movedFinished.p50, moved.count, pending.p50, pending.p50 / pendingFinished.p50, pending.count))
            }
            out.append("  the two tables are probed in turns (blocks of a twentieth of the runs), with the same arguments; a key split compares the same keys")
            out.append("")
        }
        if let app = report.appLatency {
            out.append("App operations while auto-migration (default schedule) runs, ms (idle = migration registered, not stepping)")
            var appRows: [[String]] = [["operation", "idle p50", "p99", "during p50", "p99", "max", "after p50", "p99", "p99 rise"]]
            for kind in AppSimulation.kinds {
                guard let idle = app.idle[kind], let during = app.duringAutoMigration[kind] else { continue }
                let after = app.afterFinish[kind]
                appRows.append([kind, f2(idle.p50), f2(idle.p99), f2(during.p50), f2(during.p99), f2(during.max),
                                after.map { f2($0.p50) } ?? "-", after.map { f2($0.p99) } ?? "-", f2(during.p99 - idle.p99)])
            }
            out.append(table(appRows))
            out.append("")
        }
        if !report.scaling.isEmpty {
            out.append("Scaling with the non-indexed filter (exponent 1 = linear, 2 = quadratic)")
            var scaleRows: [[String]] = [["strategy", "rows", "seconds", "rows", "seconds", "exponent"]]
            for s in report.scaling {
                scaleRows.append([s.strategy, grouped(s.smallRows), f2(s.smallSeconds), grouped(s.largeRows), f2(s.largeSeconds), f2(s.exponent)])
            }
            out.append(table(scaleRows))
            out.append("")
        }
        if !report.investigation.isEmpty {
            out.append("Investigation: the stepper's batch replayed statement by statement (ms per batch, mean)")
            out.append(Investigation.table(report.investigation))
            out.append("")
        }

        out.append("Targets (issue 7; the app-cost limits and those marked are issue 17's)")
        var targetRows: [[String]] = [["target", "measured", "verdict"]]
        for t in report.targets { targetRows.append([t.target, t.measured + (t.note.map { " [\($0)]" } ?? ""), t.verdict]) }
        out.append(table(targetRows, left: [0, 1]))
        let missed = report.targets.filter { $0.pass == false }.count
        let passed = report.targets.filter { $0.pass == true }.count
        out.append("\(passed) PASS, \(missed) MISS, \(report.targets.count - passed - missed) not measured")
        return out.joined(separator: "\n")
    }

    // MARK: Formatting

    static func f2(_ value: Double) -> String { String(format: "%.2f", value) }
    static func f3(_ value: Double) -> String { String(format: "%.3f", value) }
    static func f4(_ value: Double) -> String { String(format: "%.4f", value) }

    /// 1234567 -> "1,234,567".
    static func grouped(_ value: Int) -> String {
        let digits = String(abs(value))
        var result = ""
        for (i, ch) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { result.append(",") }
            result.append(ch)
        }
        return (value < 0 ? "-" : "") + result
    }

    /// Columns padded to their widest cell; the `left` columns left-aligned, the others right-aligned.
    static func table(_ rows: [[String]], left: Set<Int> = [0]) -> String {
        guard let header = rows.first else { return "" }
        var widths = Array(repeating: 0, count: header.count)
        for row in rows { for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) } }
        return rows.map { row in
            "  " + row.enumerated().map { i, cell in
                let pad = String(repeating: " ", count: max(0, widths[i] - cell.count))
                return left.contains(i) ? cell + pad : pad + cell
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }
}
