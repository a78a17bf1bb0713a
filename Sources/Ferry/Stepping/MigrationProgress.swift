import FerrySQLite
/// Where a migration stands, per table and overall.
///
/// `FerryDatabase.progress()` reads the persisted state: rows moved and quarantined are exact, rows
/// left are an estimate from the count taken at registration (see `Table.rowsLeftIsExact`);
/// `progress(countingRowsLeft: true)` counts them exactly. Rates, ETAs and failures are measured
/// by this process (a new process starts with no rate and no failure).
public struct MigrationProgress: Sendable, Hashable {
    /// The state of one target table.
    public enum State: String, Sendable, Hashable {
        /// Registered; the stepper has not moved a row yet (app writes may have moved some).
        case pending
        /// Rows are moving.
        case migrating
        /// Every matching source row is in the target.
        case finished
        /// The latest step on this table failed (see `Table.lastError`); the next step retries it.
        case failed
    }

    /// Progress of one target table.
    public struct Table: Sendable, Hashable {
        /// The target table.
        public let name: String
        /// The source table.
        public let sourceTable: String
        /// The source file (nil: the target file).
        public let sourcePath: String?
        /// The filter, if any.
        public let filter: String?
        /// Its state.
        public let state: State
        /// Rows moved so far: by the stepper, and ahead of it by the app's writes (a pending row an
        /// update or delete touched moves first), so that moved and left add up to the rows to move.
        public let rowsMoved: Int64
        /// Rows set aside in the quarantine table (conflicts with rows already in the target).
        public let rowsQuarantined: Int64
        /// Matching rows still in the source and not yet in the target. 0 once finished.
        public let rowsLeft: Int64
        /// True when `rowsLeft` was counted; false when it is the estimate derived from the count
        /// taken at registration (it drifts when the app moves or deletes pending rows).
        public let rowsLeftIsExact: Bool
        /// Rows per second the stepper moved for this table over its recent batches in this
        /// process (0 before the first one).
        public let rowsPerSecond: Double
        /// The error of this table's latest step in this process, if it failed; cleared by the
        /// next successful step on the table.
        public let lastError: FerryError?

        /// Estimated time until this table is finished at its recent rate (zero when finished,
        /// nil when no rate is known yet).
        public var estimatedTimeLeft: Duration? {
            if state == .finished || rowsLeft == 0 { return .zero }
            return rowsPerSecond > 0 ? .seconds(Double(rowsLeft) / rowsPerSecond) : nil
        }

        /// Creates a table's progress (the engine builds these; public for tests and tools).
        public init(name: String, sourceTable: String, sourcePath: String?, filter: String?, state: State,
                    rowsMoved: Int64, rowsQuarantined: Int64, rowsLeft: Int64, rowsLeftIsExact: Bool,
                    rowsPerSecond: Double = 0, lastError: FerryError? = nil) {
            self.name = name
            self.sourceTable = sourceTable
            self.sourcePath = sourcePath
            self.filter = filter
            self.state = state
            self.rowsMoved = rowsMoved
            self.rowsQuarantined = rowsQuarantined
            self.rowsLeft = rowsLeft
            self.rowsLeftIsExact = rowsLeftIsExact
            self.rowsPerSecond = rowsPerSecond
            self.lastError = lastError
        }
    }

    /// Every registered table, in registration order.
    public let tables: [Table]
    /// Rows moved per second over the recent batches of every table (0 before the first batch).
    public let rowsPerSecond: Double

    /// Creates a progress value (the engine builds these; public for tests and tools).
    public init(tables: [Table], rowsPerSecond: Double) {
        self.tables = tables
        self.rowsPerSecond = rowsPerSecond
    }

    /// Rows moved over all tables.
    public var rowsMoved: Int64 { tables.reduce(0) { $0 + $1.rowsMoved } }
    /// Rows left over all tables (exact only when `rowsLeftIsExact`).
    public var rowsLeft: Int64 { tables.reduce(0) { $0 + $1.rowsLeft } }
    /// True when every table's `rowsLeft` was counted.
    public var rowsLeftIsExact: Bool { tables.allSatisfy(\.rowsLeftIsExact) }
    /// True when every table is finished.
    public var isFinished: Bool { tables.allSatisfy { $0.state == .finished } }
    /// The tables whose latest step failed.
    public var failedTables: [Table] { tables.filter { $0.state == .failed } }
    /// Estimated time to completion at the current overall rate, or nil when unknown. Tables
    /// are migrated in turn, so the overall rate applies to the rows left of all of them.
    public var estimatedTimeLeft: Duration? {
        if isFinished || rowsLeft == 0 { return .zero }
        return rowsPerSecond > 0 ? .seconds(Double(rowsLeft) / rowsPerSecond) : nil
    }
}
