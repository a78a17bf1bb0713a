import Foundation
import Ferry

/// Ferry's ways of moving the rows, each on its own copy of the same data:
///
/// - `manual`: `step()` in a loop with the default budget until it returns nil (what
///   `migrateAll()` does), timing every call from the caller's side;
/// - `auto`: `startAutoMigration()` with the default schedule while a simulated app works;
/// - `drain`: `startAutoMigration(.drain)` alone.
///
/// Ferry moves rows first (the source stays read-only, for crash safety) and deletes them from the
/// source in a cleanup phase after the table finished: both phases are reported.
struct FerryStrategies {
    let workload: Workload
    let budget: Duration

    // MARK: Manual stepping

    func manual(instanceName: String = "manual") throws -> StrategyRun {
        let instance = try workload.instance(instanceName)
        defer { instance.remove() }
        let database = try workload.ferryDatabase(instance, budget: budget)
        defer { database.close() }
        var result = StrategyResult(name: StrategyName.manual.rawValue, title: "Ferry step() loop (migrateAll), \(budget.milliseconds) ms budget")
        let memory = PeakMemory()
        let start = now()
        var all = LatencyRecorder(start: start)
        var move = LatencyRecorder(keepsSamples: false)
        var cleanup = LatencyRecorder(keepsSamples: false)
        var transactions = LatencyRecorder(keepsSamples: false)
        var batchRows: [Int] = []
        var checkpointWaits = 0
        var moveEnd: Double?
        var slowest = SlowestSteps()
        var wal = instance.walWatch
        while true {
            let stepStart = now()
            guard let report = try database.step() else { break }
            let end = now()
            wal.sample()
            all.record(end - stepStart, endingAt: end)
            slowest.consider(end - stepStart, at: end - start, what: Self.describe(report))
            transactions.record(report.elapsed / .seconds(1), endingAt: end)
            switch report.kind {
            case .move:
                move.record(end - stepStart, endingAt: end)
                result.rows += report.rowsMoved
                if report.rowsMoved > 0 { batchRows.append(report.rowsMoved) }
                if report.tableFinished { moveEnd = end }
            case .cleanup:
                cleanup.record(end - stepStart, endingAt: end)
            case .checkpoint:
                checkpointWaits += 1
            }
        }
        let end = now()
        result.moveSeconds = (moveEnd ?? end) - start
        result.cleanupSeconds = end - (moveEnd ?? end)
        result.peakMemoryAboveIdle = memory.peakAboveIdle
        result.moveLatency = move.summary
        result.cleanupLatency = cleanup.count > 0 ? cleanup.summary : nil
        result.allLatency = all.summary
        result.latencyKind = "step() call, caller's wall time"
        result.medianBatchRows = Self.median(batchRows)
        let tx = transactions.summary
        result.notes.append(String(format: "step transaction alone (StepReport.elapsed): p50 %.2f, p99 %.2f, max %.2f ms", tx.p50, tx.p99, tx.max))
        result.notes.append("batch size the budget adapter settled on: median \(result.medianBatchRows ?? 0) rows, \(batchRows.count) move steps, \(cleanup.count) cleanup steps, \(checkpointWaits) steps that waited for a checkpoint (WAL over walSizeLimit)")
        result.notes.append(slowest.description)
        result.notes.append(wal.description)
        result.computeRates()
        return StrategyRun(result: result, samples: all.samples)
    }

    // MARK: Auto-migration

    /// What the event callback collects.
    private final class AutoState: @unchecked Sendable {
        let lock = NSLock()
        let done = DispatchSemaphore(value: 0)
        var all: LatencyRecorder
        var move = LatencyRecorder(keepsSamples: false)
        var cleanup = LatencyRecorder(keepsSamples: false)
        var rows = 0
        var batchRows: [Int] = []
        var checkpointWaits = 0
        var moveEnd: Double?
        var cleanupEnd: Double?
        var failure: FerryError?
        var slowest = SlowestSteps()
        var log = StepLog()
        var wal: WALWatch
        init(start: Double, wal: WALWatch) {
            all = LatencyRecorder(start: start)
            self.wal = wal
        }
    }

    /// Auto-migration with `schedule`; with `app`, the app works during the whole migration and its
    /// latency is measured before (not stepping), during, and after.
    func auto(schedule: AutoMigrationSchedule, name: StrategyName, app: AppSimulation.Settings?) throws -> (StrategyRun, AppLatencyResult?) {
        let instance = try workload.instance(name.rawValue)
        defer { instance.remove() }
        let database = try workload.ferryDatabase(instance, budget: budget)
        defer { database.close() }
        let title = schedule.drain
            ? "Ferry auto-migration, drain mode"
            : "Ferry auto-migration, \(schedule == AutoMigrationSchedule() ? "default schedule" : "schedule") (\(schedule.budget.milliseconds) ms batches, \(schedule.interval.milliseconds) ms pauses)\(app != nil ? ", app working" : "")"
        var result = StrategyResult(name: name.rawValue, title: title)
        var appLatency: AppLatencyResult?
        if let app {
            appLatency = AppLatencyResult()
            appLatency?.idle = try AppSimulation(database: database, workload: workload, settings: app, seed: 1).run(seconds: app.idleSeconds)
        }
        let simulation = try app.map { try AppSimulation(database: database, workload: workload, settings: $0, seed: 2) }
        let memory = PeakMemory()
        let start = now()
        let state = AutoState(start: start, wal: instance.walWatch)
        database.onEvent { event in
            let end = now()
            state.lock.lock()
            defer { state.lock.unlock() }
            switch event {
            case .batch(let report):
                let elapsed = report.elapsed / .seconds(1)
                state.all.record(elapsed, endingAt: end)
                state.slowest.consider(elapsed, at: end - start, what: Self.describe(report))
                state.log.record(report, seconds: elapsed, endingAt: end - start)
                state.wal.sample()
                switch report.kind {
                case .move:
                    state.move.record(elapsed, endingAt: end)
                    state.rows += report.rowsMoved
                    if report.rowsMoved > 0 { state.batchRows.append(report.rowsMoved) }
                    if report.tableFinished { state.moveEnd = end }
                case .cleanup:
                    state.cleanup.record(elapsed, endingAt: end)
                    if report.sourceCleaned && state.cleanupEnd == nil {
                        state.cleanupEnd = end
                        state.done.signal()
                    }
                case .checkpoint:
                    state.checkpointWaits += 1
                }
            case .checkpointWait(let wait):
                let elapsed = wait / .seconds(1)
                state.all.record(elapsed, endingAt: end)
                state.slowest.consider(elapsed, at: end - start, what: "checkpoint wait")
                state.log.recordCheckpointWait(seconds: elapsed, endingAt: end - start)
                state.wal.sample()
                state.checkpointWaits += 1
            case .autoMigrationStopped(let error):
                state.failure = error
                state.done.signal()
            default:
                break
            }
        }
        simulation?.start(origin: start)
        database.startAutoMigration(schedule)
        let finished = state.done.wait(timeout: .now() + .seconds(4 * 3600)) == .success
        let during = simulation?.stop()
        database.stopAutoMigration()
        database.onEvent(nil)
        if let failure = state.failure { throw failure }
        guard finished else { throw FerryError.misuse("auto-migration did not finish within 4 hours") }
        if let app {
            appLatency?.duringAutoMigration = during ?? [:]
            appLatency?.afterFinish = try AppSimulation(database: database, workload: workload, settings: app, seed: 3).run(seconds: app.idleSeconds)
        }
        state.lock.lock()
        defer { state.lock.unlock() }
        let moveEnd = state.moveEnd ?? state.cleanupEnd ?? now()
        result.rows = state.rows
        result.moveSeconds = moveEnd - start
        result.cleanupSeconds = (state.cleanupEnd ?? moveEnd) - moveEnd
        result.peakMemoryAboveIdle = memory.peakAboveIdle
        result.moveLatency = state.move.summary
        result.cleanupLatency = state.cleanup.count > 0 ? state.cleanup.summary : nil
        result.allLatency = state.all.summary
        result.latencyKind = "step transaction (StepReport.elapsed, from events)"
        result.medianBatchRows = Self.median(state.batchRows)
        result.notes.append(state.slowest.description)
        result.notes.append("\(state.checkpointWaits) steps waited for a checkpoint (WAL over walSizeLimit)")
        result.notes.append(state.log.occupancy)
        result.notes.append(state.wal.description)
        if let simulation {
            result.notes.append("app during the migration: \(simulation.rounds) rounds of lookup + range + insert, \(simulation.settings.intervalMilliseconds) ms apart")
            result.notes.append(state.log.attribution(of: simulation.slowest))
        }
        result.computeRates()
        return (StrategyRun(result: result, samples: state.all.samples), appLatency)
    }

    static func describe(_ report: StepReport) -> String {
        switch report.kind {
        case .move: return report.tableFinished ? "move, table finished" : "move of \(report.rowsMoved) rows"
        case .cleanup:
            if report.sourceCleaned { return "cleanup, last" }
            return report.sourceRowsDeleted == 0 ? "cleanup, counting the source's rows" : "cleanup of \(report.sourceRowsDeleted) rows"
        case .checkpoint: return "wait for a checkpoint"
        }
    }

    static func median(_ values: [Int]) -> Int? {
        guard !values.isEmpty else { return nil }
        return values.sorted()[values.count / 2]
    }
}

extension Duration {
    /// The duration in seconds.
    var inSeconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }

    /// Whole milliseconds.
    var milliseconds: Int { Int((inSeconds * 1000).rounded()) }
}
