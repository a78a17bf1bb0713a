import FerrySQLite
import Foundation
import Ferry

/// One variant of the stepper's batch, replayed statement by statement.
struct InvestigationResult: Encodable, Sendable {
    let variant: String
    let batchRows: Int
    let batches: Int
    let rows: Int
    let seconds: Double
    /// Statement label -> mean milliseconds per batch, in execution order.
    let statements: [Statement]
    /// Batch latency (including the writer-side checkpoint of `walCap` variants).
    let latency: LatencySummary
    let largestWALMegabytes: Double

    struct Statement: Encodable, Sendable {
        let label: String
        let meanMilliseconds: Double
    }

    var rowsPerSecond: Double { seconds > 0 ? Double(rows) / seconds : 0 }
}

/// `--investigate`: where a batch's time goes. Replays the statements of one stepper batch
/// (`Sources/Ferry/Migration/Stepper.swift`, `moveBatch`) on a plain connection set up like
/// Ferry's, with catalog tables shaped like Ferry's (`ferry_migration_tables`,
/// `ferry_migration_moved`), timing each statement, at fixed batch sizes:
///
///     BEGIN IMMEDIATE
///     SELECT max(r) FROM (SELECT rowid AS r FROM src NOT INDEXED WHERE rowid > :cursor AND filter ORDER BY rowid LIMIT :n)
///     INSERT INTO temp.suspend VALUES (1)            -- the redirect triggers' off switch
///     SELECT EXISTS (SELECT 1 FROM moved WHERE target = 'T' AND source_rowid > :cursor AND source_rowid <= :hi)
///     SAVEPOINT; INSERT INTO T SELECT ... WHERE rowid > :cursor AND rowid <= :hi AND filter
///                [AND rowid NOT IN (SELECT source_rowid FROM moved WHERE target = 'T'), only when the EXISTS found one]; RELEASE
///     DELETE FROM temp.suspend
///     DELETE FROM moved WHERE target = 'T' AND source_rowid <= :hi
///     UPDATE tables SET cursor = :hi, rows_moved = ... WHERE target = 'T'
///     COMMIT
///
/// The replica mirrors the stepper at the time of writing; if they drift apart, the real step
/// timings in the main table are the truth.
struct Investigation {
    let workload: Workload

    /// - Parameters:
    ///   - bare: only `BEGIN`, a keyset `INSERT ... SELECT ... LIMIT n`, `COMMIT` (no bookkeeping).
    ///   - trigger: with a `BEFORE INSERT` temp trigger on the target whose `WHEN` checks the
    ///     suspend table, like the redirect trigger Ferry installs on the writer after the app's
    ///     first write (its body never runs during a step, but the `WHEN` runs for every row).
    ///   - walCap: when set, before a batch the writer itself runs `wal_checkpoint(TRUNCATE)` on every
    ///     WAL file larger than this many bytes (a proposal: bounded WAL under back-to-back steps).
    ///   - constantTrigger: the same trigger with `WHEN 0`: what firing a trigger costs without its check.
    func run(batchRows: Int, bare: Bool, trigger: Bool = false, constantTrigger: Bool = false, walCap: Int? = nil,
             log: (String) -> Void) throws -> InvestigationResult {
        var variant = bare ? "bare INSERT…SELECT batches" : (trigger ? "stepper replica + redirect trigger" : "stepper replica")
        if constantTrigger { variant = "stepper replica + trigger WHEN 0" }
        if let walCap { variant += " + writer TRUNCATE checkpoint > \(walCap / 1_048_576) MB" }
        log("investigate: \(variant) at \(batchRows) rows per batch")
        let instance = try workload.instance("investigate")
        defer { instance.remove() }
        let db = try workload.connection(instance)
        defer { db.close() }
        let checkpointer = SideCheckpointer(walFiles: instance.walFiles) { [workload] in try workload.connection(instance) }
        defer { checkpointer.close() }
        try db.execute("""
            CREATE TEMP TABLE bench_suspend(x);
            CREATE TABLE main.bench_tables(target TEXT NOT NULL PRIMARY KEY COLLATE NOCASE, cursor INTEGER, rows_moved INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE main.bench_moved(target TEXT NOT NULL, source_rowid INTEGER NOT NULL, PRIMARY KEY (target, source_rowid)) WITHOUT ROWID;
            INSERT INTO main.bench_tables(target) VALUES ('messages');
            """)
        if trigger || constantTrigger {
            try db.execute("""
                CREATE TEMP TRIGGER bench_redirect BEFORE INSERT ON main.messages WHEN \(constantTrigger ? "0" : "NOT EXISTS (SELECT 1 FROM temp.bench_suspend)")
                BEGIN SELECT RAISE(ABORT, 'the redirect trigger must not run during a step'); END
                """)
        }
        let source = "\(workload.qualifiedSource)"
        let rowid = "\(source).id"
        let filter = workload.filterCondition
        let columns = Workload.columns.map { "\(source).\($0)" }.joined(separator: ", ")
        let head = "INSERT INTO main.messages(\(workload.columnList)) SELECT \(columns) FROM \(source) NOT INDEXED"
        let hiSQL = "SELECT max(r) FROM (SELECT \(rowid) AS r FROM \(source) NOT INDEXED WHERE \(rowid) > ?1 AND \(filter) ORDER BY \(rowid) LIMIT ?2)"
        let insertSQL = bare
            ? head + " WHERE \(rowid) > ?1 AND \(filter) ORDER BY \(rowid) LIMIT \(batchRows)"
            : head + " WHERE \(rowid) > ?1 AND \(rowid) <= ?2 AND \(filter) AND \(rowid) NOT IN (SELECT source_rowid FROM main.bench_moved WHERE target = 'messages')"
        let rangeInsertSQL = head + " WHERE \(rowid) > ?1 AND \(rowid) <= ?2 AND \(filter)"

        var totals: [(label: String, seconds: Double)] = []
        func timed(_ label: String, _ body: () throws -> Void) throws {
            let start = now()
            try body()
            let seconds = now() - start
            if let index = totals.firstIndex(where: { $0.label == label }) {
                totals[index].seconds += seconds
            } else {
                totals.append((label, seconds))
            }
        }

        var cursor = Int64.min
        var rows = 0
        var batches = 0
        var wal = instance.walWatch
        let start = now()
        var recorder = LatencyRecorder(keepsSamples: false)
        while true {
            var hi: Int64?
            var moved = 0
            let batchStart = now()
            if let walCap {
                for (schema, path) in [("main", instance.targetPath)] + (instance.sourcePath.map { [("src", $0)] } ?? []) {
                    var info = stat()
                    if stat(path + "-wal", &info) == 0 && Int(info.st_size) > walCap {
                        try timed("WAL checkpoint") { try db.execute("PRAGMA \(schema).wal_checkpoint(TRUNCATE)") }
                    }
                }
            }
            try timed("BEGIN") { try db.execute("BEGIN IMMEDIATE TRANSACTION") }
            if bare {
                try timed("INSERT…SELECT") {
                    try db.execute(insertSQL, [.integer(cursor)])
                    moved = db.changes
                    if moved > 0 { hi = db.lastInsertRowid }
                }
            } else {
                try timed("hi SELECT") { hi = try db.scalar(hiSQL, [.integer(cursor), .integer(Int64(batchRows))], as: Int64.self) }
                if let hi {
                    try timed("suspend on") { try db.execute("INSERT INTO temp.bench_suspend VALUES (1)") }
                    try timed("SAVEPOINT") { try db.execute("SAVEPOINT bench_savepoint_1") }
                    var movedInRange = false
                    try timed("moved-set check") {
                        movedInRange = try db.scalar("""
                            SELECT EXISTS (SELECT 1 FROM main.bench_moved WHERE target = ?1 AND source_rowid > ?2 AND source_rowid <= ?3)
                            """, [.text("messages"), .integer(cursor), .integer(hi)], as: Int.self) == 1
                    }
                    try timed("INSERT…SELECT") {
                        try db.execute(movedInRange ? insertSQL : rangeInsertSQL, [.integer(cursor), .integer(hi)])
                        moved = db.changes
                    }
                    try timed("RELEASE") { try db.execute("RELEASE SAVEPOINT bench_savepoint_1") }
                    try timed("suspend off") { try db.execute("DELETE FROM temp.bench_suspend") }
                    try timed("moved-set prune") {
                        try db.execute("DELETE FROM main.bench_moved WHERE target = ?1 AND source_rowid <= ?2", [.text("messages"), .integer(hi)])
                    }
                    try timed("cursor UPDATE") {
                        try db.execute("UPDATE main.bench_tables SET cursor = ?1, rows_moved = ?2 WHERE target = ?3",
                                       [.integer(hi), .integer(Int64(rows + moved)), .text("messages")])
                    }
                }
            }
            try timed("COMMIT") { try db.execute("COMMIT") }
            recorder.record(now() - batchStart)
            wal.sample()
            guard let hi else { break }
            cursor = hi
            rows += moved
            batches += 1
            checkpointer.checkpointIfNeeded()
        }
        let seconds = now() - start
        return InvestigationResult(variant: variant, batchRows: batchRows, batches: batches, rows: rows, seconds: seconds,
                                   statements: totals.map { .init(label: $0.label, meanMilliseconds: $0.seconds * 1000 / Double(max(1, batches))) },
                                   latency: recorder.summary, largestWALMegabytes: Double(wal.largest.max() ?? 0) / 1_048_576)
    }

    /// The investigation's table: one row per variant, one column per statement.
    static func table(_ results: [InvestigationResult]) -> String {
        var labels: [String] = []
        for result in results { for s in result.statements where !labels.contains(s.label) { labels.append(s.label) } }
        var rows: [[String]] = [["variant", "rows/batch", "rows/s"] + labels + ["total", "µs/row", "p99", "max", "WAL MB"]]
        for result in results {
            let total = result.statements.reduce(0) { $0 + $1.meanMilliseconds }
            rows.append([result.variant, String(result.batchRows), ReportPrinter.grouped(Int(result.rowsPerSecond))]
                        + labels.map { label in result.statements.first { $0.label == label }.map { ReportPrinter.f3($0.meanMilliseconds) } ?? "-" }
                        + [ReportPrinter.f3(total), String(format: "%.1f", result.seconds * 1e6 / Double(max(1, result.rows))),
                           ReportPrinter.f2(result.latency.p99), ReportPrinter.f2(result.latency.max), String(format: "%.0f", result.largestWALMegabytes)])
        }
        return ReportPrinter.table(rows)
    }
}
