#if Metrics
import Ferry
import Foundation
import Metrics
import Synchronization

/// Reports a database's data migration through swift-metrics, to whatever backend the app
/// bootstrapped (Prometheus, StatsD, OpenTelemetry, ...). The library itself has no backend.
///
/// Run it beside the migration (`FerryMigrationService` of `FerryServiceLifecycle` does):
///
/// ```swift
/// let metrics = MigrationMetrics(database: database)
/// async let reporting: Void = metrics.run()
/// try await database.runAutoMigration()
/// ```
///
/// The series, their units and dimensions are in ``MigrationMetrics/Names`` and Docs/Services.md.
/// Every per-table series has the dimensions `table` (the target) and `source` (the source table,
/// prefixed with its file's name when it lives in another file: `legacy.db/messages`).
public final class MigrationMetrics: Sendable {
    /// The metric labels, all starting with the prefix given at creation (`ferry` by default).
    public struct Names: Sendable, Hashable {
        /// Counter: rows moved into targets.
        public let rowsMoved: String
        /// Counter: rows set aside in a quarantine table (a conflict with a row already in the target).
        public let rowsQuarantined: String
        /// Counter: moved rows deleted from sources by cleanup.
        public let sourceRowsDeleted: String
        /// Gauge: matching source rows still to move (estimated from the count taken at registration).
        public let rowsLeft: String
        /// Gauge: 1 for the table's current state, 0 for the others (extra dimension `state`:
        /// `pending`, `migrating`, `finished`, `failed`).
        public let tableState: String
        /// Timer: wall time of each step's transaction (extra dimension `kind`: `move`, `cleanup`).
        public let stepDuration: String
        /// Counter: steps that wrote nothing because they waited for a checkpoint (no table dimensions).
        public let checkpointWaits: String
        /// Timer: the time those steps waited (no table dimensions).
        public let checkpointWaitDuration: String
        /// Counter: failed steps, and auto-migration stopping after too many of them (dimension
        /// `kind`: `step` or `stopped`; no table dimensions).
        public let errors: String

        /// The labels with `prefix` (e.g. `ferry` gives `ferry_rows_moved_total`).
        public init(prefix: String) {
            rowsMoved = "\(prefix)_rows_moved_total"
            rowsQuarantined = "\(prefix)_rows_quarantined_total"
            sourceRowsDeleted = "\(prefix)_source_rows_deleted_total"
            rowsLeft = "\(prefix)_rows_left"
            tableState = "\(prefix)_table_state"
            stepDuration = "\(prefix)_step_duration_seconds"
            checkpointWaits = "\(prefix)_checkpoint_waits_total"
            checkpointWaitDuration = "\(prefix)_checkpoint_wait_duration_seconds"
            errors = "\(prefix)_errors_total"
        }
    }

    /// The labels this reporter records under.
    public let names: Names
    private let database: FerryDatabase
    private let refreshInterval: Duration
    private let factory: any MetricsFactory
    /// Each table's dimensions, by lower-cased target name, from the latest progress read.
    private let dimensions = Mutex<[String: [(String, String)]]>([:])

    /// Creates a reporter for `database`.
    /// - Parameters:
    ///   - database: the database whose migration is reported.
    ///   - prefix: the first part of every label.
    ///   - refreshInterval: how often `run()` reads the progress for the gauges (events update
    ///     the counters and timers as they happen).
    ///   - factory: the metrics backend; by default the one the app bootstrapped.
    public init(database: FerryDatabase, prefix: String = "ferry", refreshInterval: Duration = .seconds(5),
                factory: any MetricsFactory = MetricsSystem.factory) {
        self.database = database
        self.names = Names(prefix: prefix)
        self.refreshInterval = refreshInterval
        self.factory = factory
    }

    /// Records the migration until the task is cancelled: every event as it happens, and the
    /// gauges every `refreshInterval` and whenever a table finishes.
    public func run() async {
        let events = database.events()
        for kind in ["step", "stopped"] { _ = Counter(label: names.errors, dimensions: [("kind", kind)], factory: factory) }
        _ = Counter(label: names.checkpointWaits, dimensions: [], factory: factory)
        refresh()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                for await event in events {
                    record(event)
                }
            }
            group.addTask { [self] in
                while (try? await Task.sleep(for: refreshInterval)) != nil { refresh() }
            }
            // Both end on cancellation (the event stream ends when the database closes).
            await group.next()
            group.cancelAll()
        }
    }

    /// Reads the progress once and sets the gauges (rows left, table state). A failed read
    /// (the database closed, say) leaves them as they were.
    public func refresh() {
        guard let progress = try? database.progress() else { return }
        var byTable: [String: [(String, String)]] = [:]
        for table in progress.tables {
            let dims = Self.dimensions(of: table)
            byTable[table.name.lowercased()] = dims
            Gauge(label: names.rowsLeft, dimensions: dims, factory: factory).record(table.rowsLeft)
            recordState(table.state, dimensions: dims)
            // Created before their first increment, so that a backend shows them from the start (at 0).
            for label in [names.rowsMoved, names.rowsQuarantined, names.sourceRowsDeleted] {
                _ = Counter(label: label, dimensions: dims, factory: factory)
            }
        }
        dimensions.withLock { $0 = byTable }
    }

    /// Sets the state gauges of a table: 1 for `current`, 0 for the others.
    private func recordState(_ current: MigrationProgress.State, dimensions dims: [(String, String)]) {
        for state in [MigrationProgress.State.pending, .migrating, .finished, .failed] {
            Gauge(label: names.tableState, dimensions: dims + [("state", state.rawValue)], factory: factory)
                .record(current == state ? 1 : 0)
        }
    }

    /// Records one event (`run()` calls it for every event; public for apps that consume the
    /// events themselves).
    public func record(_ event: MigrationEvent) {
        switch event {
        case .batch(let report):
            record(report)
        case .checkpointWait(let elapsed):
            Counter(label: names.checkpointWaits, dimensions: [], factory: factory).increment()
            Timer(label: names.checkpointWaitDuration, dimensions: [], factory: factory).record(duration: elapsed)
        case .tableFinished, .allFinished:
            refresh()
        case .error:
            Counter(label: names.errors, dimensions: [("kind", "step")], factory: factory).increment()
        case .autoMigrationStopped:
            Counter(label: names.errors, dimensions: [("kind", "stopped")], factory: factory).increment()
        }
    }

    private func record(_ report: StepReport) {
        guard report.kind != .checkpoint else { return }
        let dims = tableDimensions(report.table)
        Timer(label: names.stepDuration, dimensions: dims + [("kind", report.kind.rawValue)], factory: factory)
            .record(duration: report.elapsed)
        switch report.kind {
        case .move:
            // Rows the app's writes moved ahead count when a batch passes them: the total is every row moved.
            Counter(label: names.rowsMoved, dimensions: dims, factory: factory).increment(by: report.rowsMoved + report.rowsMovedAhead)
            if report.rowsQuarantined > 0 {
                Counter(label: names.rowsQuarantined, dimensions: dims, factory: factory).increment(by: report.rowsQuarantined)
            }
            if report.rowsLeft >= 0 {
                Gauge(label: names.rowsLeft, dimensions: dims, factory: factory).record(report.tableFinished ? 0 : report.rowsLeft)
            }
            // A batch committed: the table migrates (or has just finished), whatever the last read said.
            recordState(report.tableFinished ? .finished : .migrating, dimensions: dims)
        case .cleanup:
            Counter(label: names.sourceRowsDeleted, dimensions: dims, factory: factory).increment(by: report.sourceRowsDeleted)
        case .checkpoint:
            break
        }
    }

    /// The dimensions of `table`, read from the progress the first time a table is seen.
    private func tableDimensions(_ table: String) -> [(String, String)] {
        if let known = dimensions.withLock({ $0[table.lowercased()] }) { return known }
        refresh()
        return dimensions.withLock { $0[table.lowercased()] } ?? [("table", table), ("source", "")]
    }

    /// `table` and `source` of a table's progress.
    static func dimensions(of table: MigrationProgress.Table) -> [(String, String)] {
        let source = table.sourcePath.map { URL(fileURLWithPath: $0).lastPathComponent + "/" + table.sourceTable } ?? table.sourceTable
        return [("table", table.name), ("source", source)]
    }
}
#endif
