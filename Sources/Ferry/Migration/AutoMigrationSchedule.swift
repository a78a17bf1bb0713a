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

    /// The defaults: 10 ms batches, 10 ms pauses, 5 failures, backoff from 50 ms to 5 s.
    public init(budget: Duration = .milliseconds(10), interval: Duration = .milliseconds(10), drain: Bool = false,
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
