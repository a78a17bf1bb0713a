import FerrySQLite
/// Something the migration did, delivered through `FerryDatabase.events()` and the event callback.
public enum MigrationEvent: Sendable, Hashable {
    /// A batch committed: it moved rows (`.move`) or cleaned a source (`.cleanup`).
    case batch(StepReport)
    /// A step wrote nothing: it waited `elapsed` (at most half its budget) for the checkpoint that
    /// lets an oversized WAL restart, which still runs (backpressure; see
    /// `FerryDatabase.Options.walSizeLimit`). The next step goes on.
    case checkpointWait(elapsed: Duration)
    /// A table's migration finished: every matching source row is in the target. Delivered once per
    /// table across restarts (at least once if the process dies between the finishing commit and
    /// the delivery: then again at the next open).
    case tableFinished(table: String)
    /// No table is migrating any more. Delivered once, like `tableFinished`.
    case allFinished
    /// A step failed. The migration resumes with the next step; auto-migration retries with backoff.
    case error(FerryError)
    /// Auto-migration stopped after too many consecutive failures (the last one is given).
    case autoMigrationStopped(lastError: FerryError)
}
