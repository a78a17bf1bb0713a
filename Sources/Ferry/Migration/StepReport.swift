/// What one `step()` did.
public struct StepReport: Sendable, Hashable {
    /// The target table the batch worked on.
    public let table: String
    /// Rows moved into the target by this batch.
    public let rowsMoved: Int
    /// Rows that could not be moved (constraint conflict with a row already in the target) and were
    /// set aside in the table's quarantine table by this batch.
    public let rowsQuarantined: Int
    /// Matching rows still in the source, estimated from the registration count (see `isExact`).
    public let rowsLeft: Int64
    /// Wall time of the batch's transaction, in seconds.
    public let elapsed: Double
    /// True when this batch found the table complete: no matching source row remains.
    public let tableFinished: Bool
    /// True when no table of the database is still migrating.
    public let allFinished: Bool
}
