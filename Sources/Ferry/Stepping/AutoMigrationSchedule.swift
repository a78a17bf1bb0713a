import FerrySQLite
/// How background auto-migration paces itself.
public struct AutoMigrationSchedule: Sendable, Hashable {
    /// The time budget of one batch (its transaction holds the writer this long at most, roughly).
    public var budget: Duration
    /// The pause between batches, during which the app's writes run. Ignored in drain mode.
    public var interval: Duration
    /// Maximum speed with bounded latency: batches follow each other with only a yield between
    /// them, so queued app writes still run after each batch.
    public var drain: Bool
    /// After this many consecutive failures auto-migration stops and reports
    /// `MigrationEvent.autoMigrationStopped`. A success resets the count.
    public var maximumConsecutiveFailures: Int
    /// The first retry delay after a failure; doubles on each further failure, up to `maximumBackoff`.
    public var initialBackoff: Duration
    /// The longest retry delay.
    public var maximumBackoff: Duration

    /// The defaults: 5 ms batches, no pause, 5 failures, backoff from 50 ms to 5 s.
    ///
    /// An app write waits at most for the running batch, and while the app writes a batch runs in
    /// pieces (`Stepper.runChunks`): the write waits for one piece and the commit. The budget
    /// bounds what migrating adds to the app's write latency; a pause (`interval`) gives the writer
    /// an idle share, which lowers that further and slows the migration. What each costs the app
    /// and the migration, measured, is in Docs/Performance.md.
    public init(budget: Duration = .milliseconds(5), interval: Duration = .zero, drain: Bool = false,
                maximumConsecutiveFailures: Int = 5, initialBackoff: Duration = .milliseconds(50),
                maximumBackoff: Duration = .seconds(5)) {
        self.budget = budget
        self.interval = interval
        self.drain = drain
        self.maximumConsecutiveFailures = maximumConsecutiveFailures
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
    }

    /// Drain mode with the default budget: for services that want the data moved as fast as possible.
    public static let drain = AutoMigrationSchedule(interval: .zero, drain: true)
}
