import ArgumentParser
import Foundation
import Ferry

/// `ferry-bench`: how long until the data is moved, and how much the app suffers meanwhile —
/// Ferry side by side with plain SQL and WCDB's statement shapes, on the same data, in one run.
///
///     swift run -c release ferry-bench [--rows N] [--selectivity 0.33] [--encryption sqlcipher3] [--json] [--plot steps.svg]
///
/// Progress goes to standard error; the report (table or JSON) to standard output.
@main
struct FerryBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferry-bench",
        abstract: "Benchmark Ferry's data migration against plain SQL and WCDB's statement shapes.",
        discussion: """
            Builds a source table (--rows, --row-width, --selectivity, --encryption, --placement, --index), copies \
            it for every strategy, and moves it with each: (a) floor, one INSERT…SELECT + DELETE; (b) keyset, \
            1000-row batches of plain SQL; (c) wcdb, WCDB's one-row statements (time-capped); Ferry's step loop \
            (manual), auto-migration with the default schedule while an app works (auto), and drain mode (drain); \
            then the app-side cost half-way through a migration against the finished table (appcost). Prints the \
            issue-7 targets with PASS/MISS.
            """
    )

    @OptionGroup var options: BenchOptions

    func run() throws {
        let fileManager = FileManager.default
        let directory = options.scratch.map { URL(fileURLWithPath: $0) }
            ?? fileManager.temporaryDirectory.appendingPathComponent("ferry-bench-\(ProcessInfo.processInfo.processIdentifier)")
        try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
        let removeDirectory = options.scratch == nil && !options.keep
        defer { if removeDirectory { try? fileManager.removeItem(at: directory) } }
        let started = now()
        let log = { (message: String) in
            FileHandle.standardError.write(Data(String(format: "[%6.1f s] ", now() - started).appending(message + "\n").utf8))
        }
        if options.matrix {
            try MatrixRun(options: options, arguments: ProcessInfo.processInfo.arguments).run(in: directory, log: log)
            return
        }

        var report = BenchReport()
        report.date = ISO8601DateFormatter().string(from: Date())
        report.ferryVersion = FerryVersion.version
        report.sqliteVersion = SQLiteEngine.sqliteVersion
        report.cipherVersion = SQLiteEngine.cipherVersion
        report.engine = SQLiteEngine.versionDescription
        var workload = Workload(options: options, rows: options.rows, directory: directory, tag: "main")
        report.options = [
            "rows": String(options.rows), "rowWidth": String(options.rowWidth), "selectivity": String(options.selectivity),
            "filter": workload.filterSQL ?? "none", "encryption": options.encryption.rawValue, "placement": options.placement.rawValue + (options.sourceWithoutRowid ? ", source WITHOUT ROWID" : "") + (options.sourceRollbackJournal ? ", source in rollback-journal mode" : "") + (options.keepSourceJournal ? " (kept)" : ""),
            "index": options.index.rawValue, "budget": String(options.budget), "yielding limit ms": String(options.yieldingLimit), "strategies": options.strategies.map(\.rawValue).joined(separator: ","),
            "wcdbSeconds": String(options.wcdbSeconds),
        ]

        log("building \(options.rows) rows (\(options.encryption.rawValue), \(options.placement.rawValue), index \(options.index.rawValue)) in \(directory.path)")
        try workload.build()
        defer { if !options.keep { workload.removeTemplates() } }
        report.sourceRows = options.rows
        report.matchingRows = workload.matchingRows
        report.sourceFileBytes = workload.sourceBytes

        var series: [SVGPlot.Series] = []
        func record(_ run: StrategyRun) {
            report.strategies.append(run.result)
            if !run.samples.isEmpty { series.append(.init(name: run.result.name, samples: run.samples)) }
            let r = run.result
            log("  \(r.name): \(r.rows) rows, " + String(format: "move %.2f s (%.0f rows/s), total %.2f s", r.moveSeconds, r.moveRowsPerSecond, r.totalSeconds))
        }

        let baselines = Baselines(workload: workload)
        let ferry = FerryStrategies(workload: workload, budget: options.budgetDuration)
        if options.runs(.floor) {
            log("(a) floor: one INSERT…SELECT + DELETE")
            record(try baselines.floor())
        }
        if options.runs(.keyset) {
            log("(b) keyset: 1000-row batches")
            record(try baselines.keyset())
        }
        if options.runs(.budgeted) {
            let budget = Double(options.autoBudget ?? AutoMigrationSchedule().budget.milliseconds) / 1000
            log(String(format: "(d) budgeted: plain SQL in %.0f ms transactions", budget * 1000))
            record(try baselines.budgeted(budget: budget))
        }
        if options.runs(.wcdb) {
            log("(c) wcdb: WCDB's statement shapes, capped at \(options.wcdbSeconds) s")
            record(try baselines.wcdb(cap: options.wcdbSeconds))
        }
        if options.runs(.manual) {
            log("Ferry: step() loop, \(options.budget) ms budget")
            record(try ferry.manual())
        }
        if options.runs(.drain) {
            log("Ferry: auto-migration, drain mode")
            let (run, _) = try ferry.auto(schedule: AutoMigrationSchedule(budget: options.budgetDuration, interval: .zero, drain: true), name: .drain, app: nil)
            record(run)
        }
        if options.runs(.auto) {
            log("Ferry: auto-migration, default schedule, with the app working")
            var schedule = AutoMigrationSchedule()
            if let budget = options.autoBudget { schedule.budget = .milliseconds(budget) }
            if let interval = options.autoInterval { schedule.interval = .milliseconds(interval) }
            schedule.drain = options.autoDrain
            let (run, app) = try ferry.auto(schedule: schedule, name: .auto,
                                            app: .init(intervalMilliseconds: options.appInterval, idleSeconds: 3))
            record(run)
            report.appLatency = app
        }
        if options.runs(.appcost) {
            report.appCost = try AppCostProbe(workload: workload, explains: options.explainApp, spinSeconds: options.appSpin, explainedOperations: options.explainOperations,
                                                  spinsPendingKeys: options.spinPendingKeys).run(log: log)
        }

        // With a filter: linear or quadratic? Each strategy again at a smaller size.
        if workload.filterSQL != nil {
            if let manual = report.strategy(.manual) {
                var quarter = Workload(options: options, rows: options.rows / 4, directory: directory, tag: "quarter")
                log("scaling: Ferry on \(quarter.rows) rows")
                try quarter.build()
                defer { quarter.removeTemplates() }
                let small = try FerryStrategies(workload: quarter, budget: options.budgetDuration).manual(instanceName: "manual-quarter")
                report.scaling.append(ScalingResult(strategy: StrategyName.manual.rawValue, smallRows: quarter.rows, largeRows: options.rows,
                                                    smallSeconds: small.result.moveSeconds, largeSeconds: manual.moveSeconds))
            }
            if options.runs(.wcdb) {
                var seconds: [Double] = []
                for size in [options.scalingRows, 2 * options.scalingRows] {
                    var sized = Workload(options: options, rows: size, directory: directory, tag: "scaling-\(size)")
                    log("scaling: WCDB's shapes on \(size) rows, to completion")
                    try sized.build()
                    defer { sized.removeTemplates() }
                    let run = try Baselines(workload: sized).wcdb(cap: 600, instanceName: "wcdb-\(size)")
                    seconds.append(run.result.moveSeconds)
                }
                report.scaling.append(ScalingResult(strategy: StrategyName.wcdb.rawValue, smallRows: options.scalingRows, largeRows: 2 * options.scalingRows,
                                                    smallSeconds: seconds[0], largeSeconds: seconds[1]))
            }
        }

        if options.investigate {
            let investigation = Investigation(workload: workload)
            let ferryBatch = report.strategy(.manual)?.medianBatchRows ?? 512
            let variants: [(rows: Int, bare: Bool, trigger: Bool, constantTrigger: Bool, walCap: Int?)] = [
                (ferryBatch, false, false, false, nil), (ferryBatch, false, true, false, nil), (ferryBatch, true, false, false, nil),
                (1000, false, false, false, nil), (4 * ferryBatch, false, false, false, nil),
                (ferryBatch, false, false, false, 16 << 20), (ferryBatch, false, false, false, 64 << 20),
                (ferryBatch, false, false, true, nil),
            ]
            for v in variants where options.investigateVariants.isEmpty || options.investigateVariants.contains(variants.firstIndex { $0 == v }! + 1) {
                report.investigation.append(try investigation.run(batchRows: v.rows, bare: v.bare, trigger: v.trigger,
                                                                  constantTrigger: v.constantTrigger, walCap: v.walCap, log: log))
            }
        }

        report.targets = Targets.evaluate(report, rows: options.rows, plainCrossFile: options.encryption == .plain && options.placement == .crossFile,
                                          yieldingLimitMilliseconds: options.yieldingLimit,
                                          autoBudgetMilliseconds: Double(options.autoBudget ?? AutoMigrationSchedule().budget.milliseconds))
        print(options.json ? try ReportPrinter.json(report) : ReportPrinter.human(report))
        if let jsonFile = options.jsonFile {
            try ReportPrinter.json(report).write(toFile: jsonFile, atomically: true, encoding: .utf8)
            log("wrote \(jsonFile)")
        }
        if let plot = options.plot {
            let title = "ferry-bench step latency: \(ReportPrinter.grouped(options.rows)) rows, \(options.encryption.rawValue), \(options.placement.rawValue), filter \(workload.filterSQL ?? "none")"
            try SVGPlot.render(series, title: title).write(toFile: plot, atomically: true, encoding: .utf8)
            log("wrote \(plot)")
        }
    }
}
