/// Where a migration stands, per table and overall.
public struct MigrationProgress: Sendable, Hashable {
    /// The state of one target table.
    public enum State: String, Sendable, Hashable {
        /// Registered, no row moved yet.
        case pending
        /// Rows are moving.
        case migrating
        /// Every matching source row is in the target.
        case finished
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
        /// Rows moved so far.
        public let rowsMoved: Int64
        /// Rows set aside in the quarantine table (conflicts with rows already in the target).
        public let rowsQuarantined: Int64
        /// Matching rows still in the source: an estimate from the count taken at registration
        /// (exact unless rows were written since), 0 once finished.
        public let rowsLeft: Int64
    }

    /// Every registered table, in registration order.
    public let tables: [Table]
    /// Rows moved per second over the recent batches (0 before the first batch).
    public let rowsPerSecond: Double

    /// Rows moved over all tables.
    public var rowsMoved: Int64 { tables.reduce(0) { $0 + $1.rowsMoved } }
    /// Rows left over all tables (estimate).
    public var rowsLeft: Int64 { tables.reduce(0) { $0 + $1.rowsLeft } }
    /// True when every table is finished.
    public var isFinished: Bool { tables.allSatisfy { $0.state == .finished } }
    /// Estimated seconds to completion at the current rate, or nil when unknown.
    public var estimatedSecondsLeft: Double? {
        guard rowsPerSecond > 0 else { return isFinished ? 0 : nil }
        return Double(rowsLeft) / rowsPerSecond
    }
}
