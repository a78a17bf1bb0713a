#if CommandLineTool
import FerrySQLite
import ArgumentParser
import Foundation
import Synchronization
import Ferry

/// `ferry demo`: the README's main job. Builds a legacy database, registers a plan that moves its
/// messages into a new database, migrates them in the background while reporting progress, and
/// verifies the result.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run a live migration demo on a generated database."
    )

    @OptionGroup var diagnostics: DiagnosticsOptions

    @Option(help: "Rows in the generated legacy table.")
    var rows: Int = 1_000_000

    @Flag(help: "Encrypt the legacy database with SQLCipher (SQLCipher 3 settings) and the new one with SQLCipher 4.")
    var encrypted = false

    @Option(help: "Directory for the demo databases (default: a new temporary directory, removed afterwards).")
    var directory: String?

    @Flag(help: "Only write the legacy database and a plan file (plan.json) into --directory, and stop: the data for a migration to run elsewhere (e.g. Examples/MessagesService).")
    var prepareOnly = false

    func validate() throws {
        if prepareOnly && directory == nil { throw ValidationError("--prepare-only needs --directory DIR") }
    }

    func run() async throws {
        print(FerryVersion.report)
        let fileManager = FileManager.default
        let workDirectory = directory.map { URL(fileURLWithPath: $0) }
            ?? fileManager.temporaryDirectory.appendingPathComponent("ferry-demo-\(ProcessInfo.processInfo.processIdentifier)")
        try fileManager.createDirectory(at: workDirectory, withIntermediateDirectories: true)
        defer { if directory == nil { try? fileManager.removeItem(at: workDirectory) } }
        let legacyPath = workDirectory.appendingPathComponent("legacy.db").path
        let appPath = workDirectory.appendingPathComponent("app.db").path
        for path in [legacyPath, appPath] { for suffix in ["", "-wal", "-shm"] { try? fileManager.removeItem(atPath: path + suffix) } }

        let legacyCipher: Cipher? = encrypted ? .passphrase("legacy-secret", settings: .sqlcipher3) : nil
        let appCipher: Cipher? = encrypted ? .passphrase("app-secret") : nil

        // 1. The legacy database an old app version wrote.
        let start = ContinuousClock.now
        let checksumBefore: (count: Int64, sum: Int64)
        do {
            let legacy = try Connection(path: legacyPath, configuration: .init(cipher: legacyCipher))
            try legacy.execute("""
                CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, sender TEXT, body TEXT, sent_at REAL);
                CREATE INDEX messages_by_conversation ON messages(conversation_id, sent_at);
                """)
            try legacy.transaction {
                try legacy.execute("""
                    WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
                    INSERT INTO messages SELECT x, x % 2000, 'user' || (x % 97), 'message body ' || hex(randomblob(16)), 1700000000 + x FROM n
                    """, [.integer(Int64(rows))])
            }
            checksumBefore = try Self.checksum(legacy, table: "main.messages", where: "conversation_id < 1000")
        }
        print("legacy database: \(rows) messages\(encrypted ? " (SQLCipher 3 settings)" : "") in \(Self.format(ContinuousClock.now - start))")
        if prepareOnly {
            let planPath = workDirectory.appendingPathComponent("plan.json").path
            try Self.planJSON(encrypted: encrypted).write(toFile: planPath, atomically: true, encoding: .utf8)
            print("plan: \(planPath) (messages of conversations below 1000 move from legacy.db into app.db)")
            return
        }

        // 2. The new app: conversations below 1000 move to app.db, the rest stay in legacy.db.
        let plan = MigrationPlan(sources: [
            MigrationSource(.file(legacyPath), cipher: legacyCipher, tables: [
                TableMapping(target: "messages", source: "messages", filter: "conversation_id < 1000"),
            ]),
        ])
        let database = try FerryDatabase(path: appPath, configuration: .init(cipher: appCipher), plan: plan)
        defer { database.close() }
        let expected = try database.progress().rowsLeft
        print("registered plan: \(expected) rows to move into app.db (filter: conversation_id < 1000)")

        // 3. Auto-migration in the background, progress on the terminal, and the app at work:
        //    reads and writes through the migrating table the whole time.
        let migrationStart = ContinuousClock.now
        var latencies: [Double] = []
        let events = database.events()
        database.startAutoMigration(.init(budget: .milliseconds(10), drain: true))  // a batch of at most ~10 ms, then yield
        let app = AppSimulation(database: database)
        let appTask = Task.detached { try await app.run() }
        // Stops the app after its current operation; cancelling the task instead would interrupt
        // that operation and fail the demo with `cancelled`.
        defer { app.stop() }
        var lastPrint = ContinuousClock.now
        for await event in events {
            switch event {
            case .batch(let report):
                latencies.append(report.elapsed / .seconds(1))
                if ContinuousClock.now - lastPrint > .milliseconds(500) {
                    lastPrint = .now
                    let progress = try database.progress()
                    print(String(format: "  moved %8lld, left %8lld, %8.0f rows/s", progress.rowsMoved, progress.rowsLeft, progress.rowsPerSecond))
                }
            case .tableFinished(let table):
                print("  table \(table) finished")
            case .error(let error):
                print("  step failed (will retry): \(error)")
            case .autoMigrationStopped(let error):
                throw error
            case .checkpointWait(let elapsed):
                latencies.append(elapsed / .seconds(1))  // a step's latency too
            case .allFinished:
                break
            }
            if event == .allFinished { break }
        }
        let elapsed = ContinuousClock.now - migrationStart
        app.stop()
        let appStats = try await appTask.value
        print("migrated \(expected) rows in \(Self.format(elapsed)) (\(latencies.count) batches, step p50 \(Self.milliseconds(Self.percentile(latencies, 0.5))) ms, "
              + "p99 \(Self.milliseconds(Self.p99(latencies))) ms, max \(Self.milliseconds(latencies.max() ?? 0)) ms)")
        print("app during migration: \(appStats.reads) reads (p99 \(Self.milliseconds(Self.p99(appStats.readLatencies))) ms), "
              + "\(appStats.inserts) inserts (p99 \(Self.milliseconds(Self.p99(appStats.writeLatencies))) ms), all through the rewriter")

        // 4. Clean the source: delete the moved rows from legacy.db in budgeted steps.
        let cleanupStart = ContinuousClock.now
        database.stopAutoMigration()
        while try await database.step() != nil {}
        // Auto-migration may have run cleanup steps before it stopped: count what legacy.db lost.
        let remaining = try Connection(path: legacyPath, configuration: .init(cipher: legacyCipher)).scalar(
            "SELECT count(*) FROM messages", as: Int.self) ?? 0
        print("cleaned legacy.db: \(rows - remaining) moved rows deleted in \(Self.format(ContinuousClock.now - cleanupStart))")

        // 5. Verify: the moved rows are exactly the matching legacy rows, the others stayed.
        database.close()
        let appDB = try Connection(path: appPath, configuration: .init(cipher: appCipher))
        let checksumAfter = try Self.checksum(appDB, table: "main.messages", where: "body NOT LIKE 'new %'")
        let newRows = try appDB.scalar("SELECT count(*) FROM messages WHERE body LIKE 'new %'", as: Int.self) ?? -1
        let legacy = try Connection(path: legacyPath, configuration: .init(cipher: legacyCipher))
        let leftInLegacy = try legacy.scalar("SELECT count(*) FROM messages", as: Int64.self) ?? 0
        let ok = checksumAfter == checksumBefore && leftInLegacy == Int64(rows) - checksumBefore.count && newRows == appStats.inserts
        print("verification: \(checksumAfter.count) moved rows and \(newRows) app rows in app.db, \(leftInLegacy) rows left in legacy.db, "
              + "checksums \(ok ? "match: OK" : "DIFFER: FAILED")")
        if !ok { throw ExitCode.failure }
    }

    /// The demo's plan as a plan file (`MigrationPlanFile`), paths relative to its directory.
    static func planJSON(encrypted: Bool) -> String {
        let targetKey = encrypted ? #", "key": "app-secret""# : ""
        let sourceKey = encrypted ? #", "key": "legacy-secret", "cipher": { "compatibility": 3 }"# : ""
        return """
            {
              "target": { "path": "app.db"\(targetKey) },
              "sources": [
                { "path": "legacy.db"\(sourceKey),
                  "tables": [ { "source": "messages", "target": "messages", "filter": "conversation_id < 1000" } ] }
              ]
            }

            """
    }

    /// Row count and a content checksum of a table's rows.
    static func checksum(_ db: Connection, table: String, where condition: String) throws -> (count: Int64, sum: Int64) {
        let row = try db.fetchOne("""
            SELECT count(*), total(id * 31 + conversation_id * 7 + length(body) + unicode(substr(body, 15)) + sent_at) FROM \(table) WHERE \(condition)
            """)
        let count: Int64 = try row?.column(0) ?? 0
        let sum: Double = try row?.column(1) ?? 0
        return (count, Int64(sum))
    }

    static func format(_ duration: Duration) -> String { String(format: "%.2f s", duration.seconds) }

    /// The 99th percentile of durations in seconds.
    static func p99(_ values: [Double]) -> Double { percentile(values, 0.99) }

    /// A percentile (0...1) of durations in seconds.
    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }

    static func milliseconds(_ seconds: Double) -> String { String(format: "%.2f", seconds * 1000) }
}

extension Duration {
    var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }
}

/// The app of the demo: point reads, range counts and inserts through the migrating table, as a
/// real app would issue them while the migration runs.
struct AppSimulation: Sendable {
    let database: FerryDatabase
    private let stopped = StopFlag()

    /// A flag the demo sets and the app's loop reads.
    private final class StopFlag: Sendable {
        let value = Atomic<Bool>(false)
    }

    /// Ends `run()` after the operation in flight.
    func stop() { stopped.value.store(true, ordering: .relaxed) }

    struct Stats: Sendable {
        var reads = 0
        var inserts = 0
        var readLatencies: [Double] = []
        var writeLatencies: [Double] = []
    }

    /// Runs until `stop()` (or cancellation).
    func run() async throws -> Stats {
        var stats = Stats()
        var generator = SystemRandomNumberGenerator()
        while !stopped.value.load(ordering: .relaxed) && !Task.isCancelled {
            let conversation = Int64.random(in: 0..<1000, using: &generator)
            var start = ContinuousClock.now
            let count = try await database.read { db in
                try db.scalar("SELECT count(*) FROM messages WHERE conversation_id = ?", [.integer(conversation)], as: Int.self)
            }
            stats.readLatencies.append((ContinuousClock.now - start).seconds)
            stats.reads += 1
            guard count != nil else { throw FerryError.misuse("demo read returned nothing") }
            start = ContinuousClock.now
            let body = "new \(stats.inserts)"
            try await database.write { db in
                try db.execute("INSERT INTO messages(conversation_id, sender, body, sent_at) VALUES (?, 'demo', ?, unixepoch())",
                               [.integer(conversation), .text(body)])
            }
            stats.writeLatencies.append((ContinuousClock.now - start).seconds)
            stats.inserts += 1
            try? await Task.sleep(for: .milliseconds(5))
        }
        return stats
    }
}
#endif
