#if ServiceLifecycle
import Ferry
import FerryMetrics
import Logging
import ServiceLifecycle

/// Background auto-migration as a swift-service-lifecycle `Service`: add it to the app's
/// `ServiceGroup` beside its HTTP server and it moves rows with a schedule until every table is
/// migrated, reports through swift-metrics and swift-log, and stops cleanly on graceful shutdown.
///
/// ```swift
/// let database = try FerryDatabase(path: "app.db", plan: plan)
/// let group = ServiceGroup(configuration: .init(
///     services: [.init(service: FerryMigrationService(database: database)), .init(service: server)],
///     gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
/// try await group.run()
/// ```
///
/// - **Graceful shutdown** (SIGTERM): the running batch commits (at most about one schedule budget),
///   no other starts, and `run()` returns; the next start resumes where this one stopped. Nothing
///   moved is lost and nothing is moved twice (a batch is one transaction).
/// - **Failures**: a failed step is logged and retried with the schedule's backoff; after
///   `maximumConsecutiveFailures` in a row `run()` throws the last `FerryError`, which the service
///   group handles as its configuration says (by default it shuts the group down).
/// - **Finished**: when no table migrates any more the service, by default, stays idle until
///   shutdown, so that a `ServiceGroup` (which ends when one of its services returns) keeps serving.
public struct FerryMigrationService: Service {
    /// What `run()` does once every table is migrated.
    public enum Completion: Sendable, Hashable {
        /// Wait, idle, for graceful shutdown or cancellation (a service group keeps running).
        case waitForShutdown
        /// Return at once (configure the service group's `successTerminationBehavior` to `.ignore`
        /// if the other services should keep running).
        case returnImmediately
    }

    /// The database whose migration this service runs.
    public let database: FerryDatabase
    /// How the migration paces itself.
    public let schedule: AutoMigrationSchedule
    /// The metrics reporter, or nil for none.
    public let metrics: MigrationMetrics?
    /// What happens once everything is migrated.
    public let completion: Completion
    private let logger: Logger

    /// A service that reports to the metrics backend the app bootstrapped (labels `ferry_...`).
    /// - Parameters:
    ///   - database: the database to migrate (its plan registered).
    ///   - schedule: the pacing of the batches.
    ///   - completion: what `run()` does once everything is migrated.
    ///   - logger: where starts, finished tables, failures and stops are logged.
    public init(database: FerryDatabase, schedule: AutoMigrationSchedule = .init(), completion: Completion = .waitForShutdown,
                logger: Logger = Logger(label: "ferry.migration")) {
        self.init(database: database, schedule: schedule, metrics: MigrationMetrics(database: database),
                  completion: completion, logger: logger)
    }

    /// A service with its own metrics reporter (another prefix or factory), or none (`nil`).
    /// - Parameters:
    ///   - database: the database to migrate (its plan registered).
    ///   - schedule: the pacing of the batches.
    ///   - metrics: the reporter, or nil to record no metrics.
    ///   - completion: what `run()` does once everything is migrated.
    ///   - logger: where starts, finished tables, failures and stops are logged.
    public init(database: FerryDatabase, schedule: AutoMigrationSchedule = .init(), metrics: MigrationMetrics?,
                completion: Completion = .waitForShutdown, logger: Logger = Logger(label: "ferry.migration")) {
        self.database = database
        self.schedule = schedule
        self.metrics = metrics
        self.completion = completion
        self.logger = logger
    }

    /// Runs the migration until everything is migrated (then as `completion` says), graceful
    /// shutdown, or cancellation.
    /// - Throws: the last `FerryError` when `schedule.maximumConsecutiveFailures` steps failed in a row.
    public func run() async throws {
        let events = database.events()
        try await withThrowingTaskGroup(of: Void.self) { group in
            if let metrics { group.addTask { await metrics.run() } }
            group.addTask { [logger] in
                for await event in events { Self.log(event, to: logger) }
            }
            defer { group.cancelAll() }
            let rowsLeft = (try? database.progress().rowsLeft) ?? 0
            logger.info("auto-migration running", metadata: ["rows_left": "\(rowsLeft)", "budget": "\(schedule.budget)"])
            do {
                try await cancelWhenGracefulShutdown { [database, schedule] in try await database.runAutoMigration(schedule) }
            } catch FerryError.cancelled, FerryError.connectionClosed {
                logger.info("auto-migration stopped; the next start resumes it")
                return
            } catch {
                logger.error("auto-migration stopped after repeated failures", metadata: ["error": "\(error)"])
                throw error
            }
            metrics?.refresh()
            logger.info("every table is migrated")
            if completion == .waitForShutdown {
                try? await gracefulShutdown()  // returns on shutdown; throws (ignored) on cancellation
            }
        }
    }

    private static func log(_ event: MigrationEvent, to logger: Logger) {
        switch event {
        case .tableFinished(let table):
            logger.info("table migrated", metadata: ["table": "\(table)"])
        case .error(let error):
            logger.warning("migration step failed; retrying", metadata: ["error": "\(error)"])
        case .batch, .checkpointWait, .allFinished, .autoMigrationStopped:
            break
        }
    }
}
#endif
