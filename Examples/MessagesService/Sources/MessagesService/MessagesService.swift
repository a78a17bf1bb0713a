import ArgumentParser
import Ferry
import FerryMetrics
import FerryServiceLifecycle
import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus

/// `messages-service`: an HTTP service over a database whose `messages` table migrates while it
/// serves. Reads and writes go through Ferry as if the migration had finished; the migration runs
/// in the background as a `FerryMigrationService`, stops between batches on SIGTERM or SIGINT, and
/// resumes at the next start.
@main
struct MessagesService: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "messages-service",
        abstract: "Serve messages over HTTP while Ferry migrates them in the background.")

    @Option(help: "The app's database (the migration's target).")
    var db: String?

    @Option(help: ArgumentHelp("A Ferry plan file: registers the migration, supplies the keys and the schedule.", valueName: "PLAN.json"))
    var plan: String?

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0: any free port; the one chosen is printed).")
    var port = 8080

    func validate() throws {
        if db == nil && plan == nil { throw ValidationError("give --db PATH, --plan PLAN.json, or both") }
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let logger = Logger(label: "messages-service")

        // Metrics: Prometheus text at GET /metrics.
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Steps last milliseconds: buckets from 0.5 ms to 1 s.
        factory.defaultDurationHistogramBuckets = [0.5, 1, 2, 5, 10, 20, 50, 100, 250, 500, 1000].map { Duration.microseconds(Int64($0 * 1000)) }
        MetricsSystem.bootstrap(factory)

        let (database, schedule) = try openDatabase()
        defer { database.close() }

        let migration = FerryMigrationService(database: database, schedule: schedule, logger: logger)
        let app = Application(
            router: Routes(database: database, registry: registry).router(),
            configuration: .init(address: .hostname(host, port: port), serverName: "messages-service"),
            services: [migration],
            onServerRunning: { channel in
                // The tests (and scripts) read this line to find a port chosen by the system.
                let line = "listening on \(channel.localAddress?.ipAddress ?? "?"):\(channel.localAddress?.port ?? 0)\n"
                FileHandle.standardOutput.write(Data(line.utf8))
            },
            logger: logger)
        try await app.runService()
    }

    /// Opens the database, registering the plan file's plan when one is given.
    private func openDatabase() throws -> (FerryDatabase, AutoMigrationSchedule) {
        var schedule = AutoMigrationSchedule()
        guard let plan else {
            return (try FerryDatabase(path: db!), schedule)
        }
        let file = try MigrationPlanFile.load(path: plan)
        if let db, URL(fileURLWithPath: db).standardizedFileURL.path != file.targetPath {
            throw ValidationError("--db \(db) is not the plan's target (\(file.targetPath))")
        }
        if let budget = file.schedule.budget { schedule.budget = budget }
        if let interval = file.schedule.interval { schedule.interval = interval }
        if file.schedule.drain == true { schedule.drain = true }
        let database = try FerryDatabase(path: file.targetPath, configuration: .init(cipher: file.targetCipher), plan: file.plan)
        return (database, schedule)
    }
}
