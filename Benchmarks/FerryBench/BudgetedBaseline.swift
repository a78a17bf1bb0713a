import FerrySQLite
import Foundation

extension Baselines {
    /// (d) `budgeted`: what any migration whose transactions on the target's file fit the
    /// auto-migration budget reaches on this data at best, with no app, no rewriter and no
    /// bookkeeping. Measured below Ferry, it is the ceiling of issue 37's `auto` rate.
    ///
    /// Two phases, as Ferry's:
    /// 1. copy: `INSERT … SELECT … WHERE id > ? ORDER BY id LIMIT ?` in transactions that take
    ///    about `budget` each, commit included (the batch adapts after every transaction);
    /// 2. retire the copied rows: a source in the target's file is deleted in id ranges in such
    ///    transactions too (the app's writes would wait for anything longer); a source of its own
    ///    file in one `DELETE` there, which holds no lock the app's writes need.
    ///
    /// Plain SQL on a connection set up like Ferry's, with the same side checkpointer as the other
    /// baselines, and Ferry's backpressure: when a WAL file outgrows `--wal-limit`, a passive
    /// checkpoint runs between two transactions, so that the next one restarts the log (back to
    /// back commits never leave the side checkpointer a gap: the logs grew to 2-4.5 GB at 1M rows,
    /// and every page read then searched a WAL index that large).
    func budgeted(budget: Double) throws -> StrategyRun {
        let instance = try workload.instance(StrategyName.budgeted.rawValue)
        defer { instance.remove() }
        let db = try workload.connection(instance)
        defer { db.close() }
        let checkpointer = SideCheckpointer(walFiles: instance.walFiles) { [workload] in try workload.connection(instance) }
        defer { checkpointer.close() }
        var result = StrategyResult(name: StrategyName.budgeted.rawValue,
                                    title: String(format: "(d) plain SQL in %.0f ms transactions, no app", budget * 1000))
        let source = workload.qualifiedSource
        let insert = try db.cachedStatement("""
            INSERT INTO \(insertColumns) SELECT \(selectColumns) FROM \(source)
            WHERE id > ?1 AND \(workload.filterCondition) ORDER BY id LIMIT ?2
            """)
        let memory = PeakMemory()
        let start = now()
        var recorder = LatencyRecorder(start: start)
        var wal = instance.walWatch
        var copyRows: [Int] = []
        var catchUps = 0
        /// Backpressure: a WAL over the limit is checkpointed between transactions.
        func relieveWAL() throws {
            guard SideCheckpointer.anyFile(instance.walFiles, largerThan: workload.walSizeLimit) else { return }
            try db.execute("PRAGMA wal_checkpoint(PASSIVE)")
            catchUps += 1
        }

        /// Runs `body` (which returns the rows it handled, 0 when done) in transactions of about
        /// `budget`, the batch halfway to the size that would have fitted after each.
        func inBudgetedTransactions(_ body: (_ limit: Int) throws -> Int) throws -> [Int] {
            var limit = 256
            var sizes: [Int] = []
            while true {
                let begin = now()
                try db.execute("BEGIN IMMEDIATE")
                let rows = try body(limit)
                try db.execute("COMMIT")
                let end = now()
                checkpointer.checkpointIfNeeded()
                wal.sample()
                try relieveWAL()
                guard rows > 0 else { return sizes }
                recorder.record(end - begin, endingAt: end)
                sizes.append(rows)
                let fitting = Double(rows) * budget / max(end - begin, 1e-6)
                limit = min(1_000_000, max(16, (limit + Int(fitting)) / 2))
            }
        }

        var last: Int64 = .min
        copyRows = try inBudgetedTransactions { limit in
            try insert.execute([.integer(last), .integer(Int64(limit))])
            let rows = db.changes
            if rows > 0 { last = db.lastInsertRowid }  // rows go in by increasing id: the last is the highest
            result.rows += rows
            return rows
        }
        let copied = now()

        var deleteRows: [Int] = []
        if workload.placement == .sameFile {
            let upper = try db.cachedStatement("SELECT max(id) FROM (SELECT id FROM \(source) WHERE id > ?1 ORDER BY id LIMIT ?2)")
            let delete = try db.cachedStatement("DELETE FROM \(source) WHERE id > ?1 AND id <= ?2 AND \(workload.filterCondition)")
            var cursor: Int64 = .min
            deleteRows = try inBudgetedTransactions { limit in
                guard case .integer(let high)? = try upper.fetchOne([.integer(cursor), .integer(Int64(limit))])?[0] else { return 0 }
                try delete.execute([.integer(cursor), .integer(high)])
                cursor = high
                return max(1, db.changes)
            }
        } else {
            try db.execute("BEGIN")
            try db.execute("DELETE FROM \(source) WHERE \(workload.filterCondition)")
            try db.execute("COMMIT")
        }
        let end = now()
        result.moveSeconds = copied - start
        result.cleanupSeconds = end - copied
        result.peakMemoryAboveIdle = memory.peakAboveIdle
        result.moveLatency = recorder.summary
        result.allLatency = recorder.summary
        result.latencyKind = "transaction, BEGIN…COMMIT"
        result.medianBatchRows = FerryStrategies.median(copyRows)
        result.notes.append("median rows per transaction: copy \(result.medianBatchRows ?? 0) (\(copyRows.count) transactions), "
                            + (workload.placement == .sameFile
                                ? "delete \(FerryStrategies.median(deleteRows) ?? 0) (\(deleteRows.count) transactions)"
                                : "delete: one statement in the source's file")
                            + "; \(checkpointer.checkpoints) background checkpoints, \(catchUps) catch-up checkpoints between transactions")
        result.notes.append(wal.description)
        result.computeRates()
        return StrategyRun(result: result, samples: recorder.samples)
    }
}
