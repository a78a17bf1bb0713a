import Ferry
import Foundation

/// `ferry-bench --matrix`: every placement (cross-file, same-file) × source encryption (plain,
/// SQLCipher 3, SQLCipher 4), each cell a run of its own of this executable (the single
/// `INSERT…SELECT` + `DELETE`, plain SQL in transactions of the auto budget, drain, and auto with
/// the app working, on the same data), then one table of rows/s, ratio to the cell's single
/// statement, auto's share of what plain SQL reaches within the budget, worst step and worst app
/// statement, checked against issue 37's targets. The other options (`--rows`, `--budget`, `--selectivity`,
/// ...) apply to every cell. The step-latency SVG of the cell with the worst step goes to `--plot`
/// (or `matrix-worst-cell.svg` in the scratch directory).
struct MatrixRun {
    let options: BenchOptions
    /// The arguments this process was started with (the cells get them, minus what the matrix sets).
    let arguments: [String]

    /// One cell's numbers.
    struct Cell {
        let placement: Placement
        let encryption: SourceEncryption
        /// Per strategy: rows/s of move + cleanup, and the slowest step (ms).
        var rowsPerSecond: [String: Double] = [:]
        var worstStep: [String: Double] = [:]
        /// The slowest app operation while `auto` ran (ms).
        var worstAppStatement: Double?
        /// Steps that waited for a checkpoint, per strategy (from the run's notes).
        var checkpointWaits: [String: Int] = [:]
        var plot: URL
        var name: String { "\(placement.rawValue), \(encryption.rawValue)" }

        /// `strategy`'s rows/s over `baseline`'s (the single statement's by default).
        func ratio(_ strategy: String, to baseline: String = "floor") -> Double? {
            guard let rate = rowsPerSecond[strategy], let floor = rowsPerSecond[baseline], floor > 0 else { return nil }
            return rate / floor
        }
    }

    func run(in directory: URL, log: (String) -> Void) throws {
        var cells: [Cell] = []
        for placement in Placement.allCases {
            for encryption in SourceEncryption.allCases {
                let tag = "\(placement.rawValue)-\(encryption.rawValue)"
                let json = directory.appendingPathComponent("matrix-\(tag).json")
                let plot = directory.appendingPathComponent("matrix-\(tag).svg")
                let scratch = directory.appendingPathComponent("matrix-\(tag)")
                try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
                log("matrix cell \(tag)")
                try runCell(["--placement", placement.rawValue, "--encryption", encryption.rawValue, "--strategies", "floor,budgeted,drain,auto",
                             "--json-file", json.path, "--plot", plot.path, "--scratch", scratch.path])
                try? FileManager.default.removeItem(at: scratch)
                cells.append(try Self.cell(placement: placement, encryption: encryption, json: json, plot: plot))
            }
        }
        print(report(cells))
        if let worst = cells.max(by: { ($0.worstStep["auto"] ?? 0) < ($1.worstStep["auto"] ?? 0) }) {
            let destination = options.plot.map { URL(fileURLWithPath: $0) } ?? directory.appendingPathComponent("matrix-worst-cell.svg")
            try? FileManager.default.removeItem(at: destination)
            try FileManager.default.copyItem(at: worst.plot, to: destination)
            print("step latency over time of the worst cell (\(worst.name)): \(destination.path)")
        }
    }

    /// Runs this executable for one cell, with the caller's options but the cell's.
    private func runCell(_ cellArguments: [String]) throws {
        let owned: Set<String> = ["--matrix", "--placement", "--encryption", "--strategies", "--json-file", "--plot", "--scratch", "--json", "--keep"]
        let valued: Set<String> = ["--placement", "--encryption", "--strategies", "--json-file", "--plot", "--scratch"]
        var passed: [String] = []
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            if owned.contains(name) {
                index += valued.contains(name) && !argument.contains("=") ? 2 : 1
                continue
            }
            passed.append(argument)
            index += 1
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).standardizedFileURL
        process.arguments = passed + cellArguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw MatrixError(message: "the cell \(cellArguments.prefix(4).joined(separator: " ")) exited with status \(process.terminationStatus)")
        }
    }

    /// Reads a cell's JSON report.
    static func cell(placement: Placement, encryption: SourceEncryption, json: URL, plot: URL) throws -> Cell {
        guard let report = try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any],
              let strategies = report["strategies"] as? [[String: Any]]
        else { throw MatrixError(message: "no report in \(json.path)") }
        var cell = Cell(placement: placement, encryption: encryption, plot: plot)
        for strategy in strategies {
            guard let name = strategy["name"] as? String else { continue }
            cell.rowsPerSecond[name] = strategy["totalRowsPerSecond"] as? Double
            cell.worstStep[name] = (strategy["allLatency"] as? [String: Any])?["max"] as? Double
            let notes = strategy["notes"] as? [String] ?? []
            for note in notes {
                // "…, 12 steps that waited for a checkpoint (WAL over walSizeLimit)" / "12 steps waited for a checkpoint"
                guard let range = note.range(of: #"(\d+) steps? (that )?waited for a checkpoint"#, options: .regularExpression) else { continue }
                cell.checkpointWaits[name] = Int(note[range].prefix { $0.isNumber })
            }
        }
        if let latency = report["appLatency"] as? [String: Any], let during = latency["duringAutoMigration"] as? [String: Any],
           let all = during["all"] as? [String: Any] {
            cell.worstAppStatement = all["max"] as? Double
        }
        return cell
    }

    /// The table, and the targets met or missed.
    func report(_ cells: [Cell]) -> String {
        func number(_ value: Double?, _ format: String) -> String { value.map { String(format: format, $0) } ?? "-" }
        let budget = Double(options.autoBudget ?? AutoMigrationSchedule().budget.milliseconds)
        var lines = ["", "Matrix: \(options.rows) rows, selectivity \(options.selectivity), step budget \(options.budget) ms, auto budget \(budget) ms",
                     "| cell | single statement, rows/s | plain SQL in \(Int(budget)) ms transactions, rows/s (ratio) | drain, rows/s (ratio) | auto, rows/s (ratio) | auto / plain SQL in \(Int(budget)) ms | worst step drain / auto, ms | worst app statement, ms | checkpoint waits drain / auto |",
                     "|---|---|---|---|---|---|---|---|---|"]
        for cell in cells {
            let single = number(cell.rowsPerSecond["floor"], "%.0f")
            let budgeted = number(cell.rowsPerSecond["budgeted"], "%.0f") + " (" + number(cell.ratio("budgeted"), "%.2f") + "x)"
            let drain = number(cell.rowsPerSecond["drain"], "%.0f") + " (" + number(cell.ratio("drain"), "%.2f") + "x)"
            let auto = number(cell.rowsPerSecond["auto"], "%.0f") + " (" + number(cell.ratio("auto"), "%.2f") + "x)"
            let share = number(cell.ratio("auto", to: "budgeted"), "%.2f") + "x"
            let steps = number(cell.worstStep["drain"], "%.1f") + " / " + number(cell.worstStep["auto"], "%.1f")
            let app = number(cell.worstAppStatement, "%.1f")
            let waits = (cell.checkpointWaits["drain"].map(String.init) ?? "-") + " / " + (cell.checkpointWaits["auto"].map(String.init) ?? "-")
            lines.append("| " + [cell.name, single, budgeted, drain, auto, share, steps, app, waits].joined(separator: " | ") + " |")
        }
        func verdict(_ name: String, _ pass: (Cell) -> Bool?) -> String {
            let misses = cells.filter { pass($0) == false }.map(\.name)
            let unknown = cells.filter { pass($0) == nil }.map(\.name)
            return "\(misses.isEmpty && unknown.isEmpty ? "PASS" : "MISS")  \(name)"
                + (misses.isEmpty ? "" : ": missed in \(misses.joined(separator: "; "))")
                + (unknown.isEmpty ? "" : ", not measured in \(unknown.joined(separator: "; "))")
        }
        lines += ["", "Targets (issue 37):",
                  verdict("auto with the app working >= 0.25x the single statement, every cell") { $0.ratio("auto").map { $0 >= 0.25 } },
                  verdict("drain >= 0.8x the single statement, every cell") { $0.ratio("drain").map { $0 >= 0.8 } },
                  verdict("worst auto step <= 3x the budget (\(Int(3 * budget)) ms), every cell") { $0.worstStep["auto"].map { $0 <= 3 * budget } },
                  verdict("worst app statement <= 3x the budget (\(Int(3 * budget)) ms), every cell") { $0.worstAppStatement.map { $0 <= 3 * budget } }]
        let bounded = cells.filter { ($0.ratio("budgeted") ?? 1) < 0.25 }.map(\.name)
        if !bounded.isEmpty {
            lines.append("Plain SQL committing every \(Int(budget)) ms, alone (no app, no Ferry), stays below 0.25x the single statement in: "
                         + bounded.joined(separator: "; ") + ". There no migration whose transactions fit the budget reaches 0.25x.")
        }
        return lines.joined(separator: "\n")
    }
}

/// A matrix run that could not go on.
struct MatrixError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
