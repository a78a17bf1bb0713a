import FerrySQLite
/// What one `step()` did.
public struct StepReport: Sendable, Hashable {
    /// The kind of work a step does.
    public enum Kind: String, Sendable, Hashable {
        /// Moved rows into a target.
        case move
        /// Deleted moved rows from the source of a finished table (or dropped the source table).
        case cleanup
        /// Wrote nothing: a WAL holds more than `FerryDatabase.Options.walSizeLimit` and the step
        /// spent half its budget waiting for the checkpoint that lets the log restart, which is
        /// still running. The next step goes on. `table` is empty and `rowsLeft` is -1 (not counted).
        case checkpoint
    }

    /// The kind of work this step did.
    public let kind: Kind
    /// The target table the step worked on.
    public let table: String
    /// Rows moved into the target by this batch.
    public let rowsMoved: Int
    /// Rows that could not be moved (constraint conflict with a row already in the target) and were
    /// set aside in the table's quarantine table by this batch.
    public let rowsQuarantined: Int
    /// Moved rows deleted from the source by a cleanup step.
    public let sourceRowsDeleted: Int
    /// Matching rows still to move, estimated from the count taken at registration.
    public let rowsLeft: Int64
    /// Wall time of the step's transaction (for a `.checkpoint` step: of its wait).
    public let elapsed: Duration
    /// True when this batch found the table complete: no matching source row remains unmoved.
    public let tableFinished: Bool
    /// True when no table of the database is still migrating (source cleanup may still follow).
    public let allFinished: Bool
    /// True when this cleanup step finished the table's cleanup: its moved rows left the source
    /// (and the source table was dropped once empty). A cleanup step that deleted nothing before
    /// that was counting the source's rows first (see Concepts, "Stepping").
    public var sourceCleaned = false
    /// Rows the app's writes had moved into the target ahead of the stepper, which this batch
    /// passed and counted as moved (they are in no batch's `rowsMoved`): `rowsMoved` +
    /// `rowsMovedAhead` over a table's batches is every row moved, and `rowsLeft` leaves them out.
    public var rowsMovedAhead = 0

    /// The report of a step that waited `elapsed` for a checkpoint and wrote nothing.
    static func checkpointWait(elapsed: Duration) -> StepReport {
        StepReport(kind: .checkpoint, table: "", rowsMoved: 0, rowsQuarantined: 0, sourceRowsDeleted: 0, rowsLeft: -1,
                   elapsed: elapsed, tableFinished: false, allFinished: false)
    }
}
