import FerrySQLite
import Foundation
import Ferry

/// A strategy's result with its latency samples over time (for the plot).
struct StrategyRun: Sendable {
    var result: StrategyResult
    var samples: [(at: Double, seconds: Double)] = []
}

/// The three baselines, plain SQL through `FerrySQLite.Connection` on connections set up like
/// Ferry's (`Workload.connection`), each on its own copy of the same data:
///
/// - (a) `floor`: one `INSERT ... SELECT` + `DELETE` in one transaction;
/// - (b) `keyset`: 1000-row keyset batches, `INSERT ... SELECT ... WHERE id > ? ORDER BY id LIMIT
///   1000` + `DELETE` of the same range, one transaction per batch;
/// - (c) `wcdb`: WCDB's stepper statements, one row per `INSERT OR IGNORE ... ORDER BY rowid DESC
///   LIMIT 1` + `DELETE` of that row, up to 101 rows per transaction, capped by time.
/// - (d) `budgeted` (BudgetedBaseline.swift): the rows copied, and deleted where they share the
///   target's file, in transactions sized to the auto-migration budget.
struct Baselines {
    let workload: Workload

    var insertColumns: String { "main.\(Workload.targetTable)(\(workload.columnList))" }
    var selectColumns: String { workload.columnList }

    // MARK: (a) floor

    func floor() throws -> StrategyRun {
        let instance = try workload.instance("floor")
        defer { instance.remove() }
        let db = try workload.connection(instance)
        defer { db.close() }
        var result = StrategyResult(name: StrategyName.floor.rawValue, title: "(a) one INSERT…SELECT + DELETE, one transaction")
        let memory = PeakMemory()
        let start = now()
        try db.execute("BEGIN IMMEDIATE")
        try db.execute("INSERT INTO \(insertColumns) SELECT \(selectColumns) FROM \(workload.qualifiedSource) WHERE \(workload.filterCondition)")
        result.rows = db.changes
        let inserted = now()
        try db.execute("DELETE FROM \(workload.qualifiedSource) WHERE \(workload.filterCondition)")
        try db.execute("COMMIT")
        let end = now()
        result.moveSeconds = end - start
        result.peakMemoryAboveIdle = memory.peakAboveIdle
        result.latencyKind = "the whole transaction"
        result.notes.append(String(format: "INSERT…SELECT alone %.2f s, DELETE + COMMIT %.2f s (the final checkpoint is not timed)",
                                   inserted - start, end - inserted))
        result.computeRates()
        var recorder = LatencyRecorder(start: start)
        recorder.record(end - start, endingAt: end)
        result.moveLatency = recorder.summary
        result.allLatency = recorder.summary
        return StrategyRun(result: result, samples: [])  // one 1-2 s "batch": left out of the plot
    }

    // MARK: (b) keyset batches

    func keyset(batch: Int = 1000) throws -> StrategyRun {
        let instance = try workload.instance("keyset")
        defer { instance.remove() }
        let db = try workload.connection(instance)
        defer { db.close() }
        let checkpointer = SideCheckpointer(walFiles: instance.walFiles) { [workload] in try workload.connection(instance) }
        defer { checkpointer.close() }
        var result = StrategyResult(name: StrategyName.keyset.rawValue, title: "(b) keyset batches of \(batch), plain SQL")
        let source = workload.qualifiedSource
        let begin = try db.cachedStatement("BEGIN IMMEDIATE")
        let commit = try db.cachedStatement("COMMIT")
        let insert = try db.cachedStatement("""
            INSERT INTO \(insertColumns) SELECT \(selectColumns) FROM \(source)
            WHERE id > ?1 AND \(workload.filterCondition) ORDER BY id LIMIT \(batch)
            """)
        let delete = try db.cachedStatement("DELETE FROM \(source) WHERE id > ?1 AND id <= ?2 AND \(workload.filterCondition)")
        let memory = PeakMemory()
        let start = now()
        var recorder = LatencyRecorder(start: start)
        var wal = instance.walWatch
        var last: Int64 = .min
        var split = (insert: 0.0, delete: 0.0, commit: 0.0)
        while true {
            let batchStart = now()
            try begin.execute()
            try insert.execute([.integer(last)])
            let count = db.changes
            if count == 0 {
                try commit.execute()
                break
            }
            let hi = db.lastInsertRowid  // rows go in by increasing id: the last is the highest
            let inserted = now()
            try delete.execute([.integer(last), .integer(hi)])
            let deleted = now()
            try commit.execute()
            let end = now()
            split.insert += inserted - batchStart
            split.delete += deleted - inserted
            split.commit += end - deleted
            recorder.record(end - batchStart, endingAt: end)
            result.rows += count
            last = hi
            checkpointer.checkpointIfNeeded()
            wal.sample()
        }
        result.moveSeconds = now() - start
        result.peakMemoryAboveIdle = memory.peakAboveIdle
        result.moveLatency = recorder.summary
        result.allLatency = recorder.summary
        result.latencyKind = "batch, BEGIN…COMMIT"
        result.medianBatchRows = batch
        let total = split.insert + split.delete + split.commit
        result.notes.append(String(format: "batch time split: INSERT…SELECT %.0f%%, DELETE %.0f%%, COMMIT %.0f%%; %d background checkpoints",
                                   100 * split.insert / total, 100 * split.delete / total, 100 * split.commit / total, checkpointer.checkpoints))
        result.notes.append(wal.description)
        result.computeRates()
        return StrategyRun(result: result, samples: recorder.samples)
    }

    // MARK: (c) WCDB's shapes

    /// Runs WCDB's stepper statements until the source has no matching row or `cap` seconds passed.
    func wcdb(cap: Double, instanceName: String = "wcdb") throws -> StrategyRun {
        let instance = try workload.instance(instanceName)
        defer { instance.remove() }
        let db = try workload.connection(instance)
        defer { db.close() }
        let checkpointer = SideCheckpointer(walFiles: instance.walFiles) { [workload] in try workload.connection(instance) }
        defer { checkpointer.close() }
        var result = StrategyResult(name: StrategyName.wcdb.rawValue, title: "(c) WCDB's shapes: 1 row per statement, ≤101 per transaction")
        let source = workload.qualifiedSource
        let filter = workload.filterSQL.map { " WHERE \($0)" } ?? ""
        let begin = try db.cachedStatement("BEGIN IMMEDIATE")
        let commit = try db.cachedStatement("COMMIT")
        let insert = try db.cachedStatement(
            "INSERT OR IGNORE INTO \(insertColumns) SELECT \(selectColumns) FROM \(source)\(filter) ORDER BY id DESC LIMIT 1")
        // WCDB's DELETE ... ORDER BY ... LIMIT needs SQLITE_ENABLE_UPDATE_DELETE_LIMIT; the same
        // row and the same scan without it.
        let hasDeleteLimit = try db.fetchAll("PRAGMA compile_options").contains { row in
            (try? row.get(0, as: String.self)) == "ENABLE_UPDATE_DELETE_LIMIT"
        }
        let delete = try db.cachedStatement(hasDeleteLimit
            ? "DELETE FROM \(source)\(filter) ORDER BY id DESC LIMIT 1"
            : "DELETE FROM \(source) WHERE id = (SELECT id FROM \(source)\(filter) ORDER BY id DESC LIMIT 1)")
        let memory = PeakMemory()
        let start = now()
        var recorder = LatencyRecorder(start: start)
        var finished = false
        while !finished && now() - start < cap {
            let batchStart = now()
            try begin.execute()
            var count = 0
            // WCDB's loop checks `count > 100` after each row, so a transaction holds up to 101.
            while count <= 100 {
                try insert.execute()
                if db.changes == 0 {
                    finished = true
                    break
                }
                try delete.execute()
                count += 1
            }
            try commit.execute()
            let end = now()
            if count > 0 { recorder.record(end - batchStart, endingAt: end) }
            result.rows += count
            checkpointer.checkpointIfNeeded()
        }
        result.moveSeconds = now() - start
        result.extrapolated = !finished
        result.peakMemoryAboveIdle = memory.peakAboveIdle
        result.moveLatency = recorder.summary
        result.allLatency = recorder.summary
        result.latencyKind = "transaction of ≤101 rows"
        result.medianBatchRows = 101
        if !finished {
            result.notes.append(String(format: "capped at %.0f s: moved %d of %d rows; rows/s is extrapolated from that window", cap, result.rows, workload.matchingRows))
            if workload.filterSQL != nil {
                result.notes.append("with a non-indexed filter the rate falls as non-matching rows pile up at the top of the scan: the extrapolation is optimistic")
            }
        }
        result.notes.append(hasDeleteLimit ? "DELETE … ORDER BY id DESC LIMIT 1 (SQLITE_ENABLE_UPDATE_DELETE_LIMIT)" : "DELETE of the same row through a subquery (no SQLITE_ENABLE_UPDATE_DELETE_LIMIT)")
        result.computeRates()
        return StrategyRun(result: result, samples: recorder.samples)
    }
}
