import FerrySQLite
import Foundation
import Ferry

/// The app's statements, all through `FerryConnection` (so through the rewriter while migrating).
struct AppStatements: Sendable {
    let workload: Workload

    let lookup = "SELECT * FROM messages WHERE id = ?1"

    /// An indexed range scan with ORDER BY ... LIMIT 100, on the table's secondary index.
    var range: String {
        switch workload.index {
        case .scattered: return "SELECT id, sender, sent_at FROM messages WHERE conversation_id = ?1 ORDER BY sent_at DESC LIMIT 100"
        case .sequential: return "SELECT id, sender, sent_at FROM messages WHERE sent_at >= 1700000000 + ?1 * 500 ORDER BY sent_at LIMIT 100"
        case .none: return "SELECT id, sender, sent_at FROM messages WHERE id >= ?1 * 500 ORDER BY id LIMIT 100"
        }
    }

    let aggregate = "SELECT count(*), sum(length(body)), max(sent_at) FROM messages"

    /// The latest 100 messages of four conversations, with their titles.
    let join = """
        SELECT c.title, m.id, m.sent_at FROM conversations c JOIN messages m ON m.conversation_id = c.id
        WHERE c.id IN (?1, ?1 + 500, ?1 + 1000, ?1 + 1500) ORDER BY m.sent_at DESC LIMIT 100
        """

    let insert = "INSERT INTO messages(conversation_id, sender, body, sent_at, cls) VALUES (?1, 'app', ?2, ?3, ?4)"
    let update = "UPDATE messages SET body = ?2 WHERE id = ?1"
    let delete = "DELETE FROM messages WHERE id = ?1"

    /// Argument of the range query: a conversation (scattered) or a position in the table.
    func rangeArgument(_ rng: inout some RandomNumberGenerator) -> Int64 {
        switch workload.index {
        case .scattered: return Int64.random(in: 0..<Int64(Workload.conversations), using: &rng)
        case .sequential, .none: return Int64.random(in: 0..<Int64(max(1, workload.rows / 500)), using: &rng)
        }
    }

    func insertArguments(_ rng: inout some RandomNumberGenerator) -> StatementArguments {
        [.integer(Int64.random(in: 0..<Int64(Workload.conversations), using: &rng)), .text("app message \(UInt32.random(in: 0...UInt32.max, using: &rng))"),
         .real(1_800_000_000 + Double.random(in: 0..<1e6, using: &rng)), .integer(Int64.random(in: 0..<100, using: &rng))]
    }

    func randomKey(_ rng: inout some RandomNumberGenerator) -> Int64 { Int64.random(in: 1...Int64(workload.rows), using: &rng) }
}

/// A small deterministic generator (SplitMix64), so both phases of the probe draw the same kind of keys.
struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

// MARK: - App-cost probe

/// App-side cost while migrating, as ratios against the same database after migration finished:
/// a separate migration is stepped to half-way (large steps, to get there fast), the database is
/// closed and opened again (so its WAL is checkpointed away), every operation is timed with no step
/// running, then the migration completes (with cleanup), the database is reopened and the same
/// operations run again. Ratios are of medians.
struct AppCostProbe {
    let workload: Workload

    struct Operation {
        let name: String
        let sql: String
        let isWrite: Bool
        let iterations: Int
        /// Limit of issue 7 for the ratio.
        let limit: Double
        let arguments: (inout SeededGenerator) -> StatementArguments
    }

    func run(log: (String) -> Void) throws -> [AppCostOperation] {
        let instance = try workload.instance("appcost")
        defer { instance.remove() }
        var database = try workload.ferryDatabase(instance, budget: .milliseconds(10))
        defer { database.close() }
        let sql = AppStatements(workload: workload)
        let operations: [Operation] = [
            Operation(name: "primary-key lookup", sql: sql.lookup, isWrite: false, iterations: 3000, limit: 1.3) { .positional([.integer(sql.randomKey(&$0))]) },
            Operation(name: "indexed range, ORDER BY … LIMIT 100", sql: sql.range, isWrite: false, iterations: 500, limit: 1.5) { .positional([.integer(sql.rangeArgument(&$0))]) },
            Operation(name: "full-table aggregate", sql: sql.aggregate, isWrite: false, iterations: 10, limit: 1.3) { _ in .none },
            Operation(name: "join with conversations", sql: sql.join, isWrite: false, iterations: 300, limit: 1.5) { .positional([.integer(Int64.random(in: 0..<500, using: &$0))]) },
            Operation(name: "single-row INSERT", sql: sql.insert, isWrite: true, iterations: 1000, limit: 1.5) { sql.insertArguments(&$0) },
            Operation(name: "UPDATE by key", sql: sql.update, isWrite: true, iterations: 1000, limit: 2.0) { .positional([.integer(sql.randomKey(&$0)), .text("updated \(UInt32.random(in: 0...UInt32.max, using: &$0))")]) },
            Operation(name: "DELETE by key", sql: sql.delete, isWrite: true, iterations: 1000, limit: 2.0) { .positional([.integer(sql.randomKey(&$0))]) },
        ]

        // Half-way: every step until half the matching rows moved, then nothing steps.
        log("app cost: stepping to half-way")
        var moved = 0
        while moved < workload.matchingRows / 2, let report = try database.step(budget: .milliseconds(100)) {
            moved += report.rowsMoved
        }
        // Both phases start from a settled file: closing checkpoints and removes the WAL, so no
        // background checkpoint of the migration's writes runs during the probes.
        database.close()
        database = try workload.ferryDatabase(instance, budget: .milliseconds(10))
        log("app cost: probing the half-migrated table (\(moved) of \(workload.matchingRows) rows moved)")
        var counts: [Int] = []
        var migrating: [LatencySummary] = []
        for (index, operation) in operations.enumerated() {
            let (summary, count) = try measure(operation, on: database, seed: UInt64(100 + index), maxIterations: operation.iterations)
            migrating.append(summary)
            counts.append(count)
        }
        log("app cost: finishing the migration")
        try database.migrateAllBlocking(budget: .milliseconds(100))
        database.close()
        database = try workload.ferryDatabase(instance, budget: .milliseconds(10))
        log("app cost: probing the finished table")
        var results: [AppCostOperation] = []
        for (index, operation) in operations.enumerated() {
            // Other keys than in the first phase (deleted rows stay deleted), drawn the same way.
            let (finished, _) = try measure(operation, on: database, seed: UInt64(200 + index), maxIterations: counts[index], fixedCount: true)
            results.append(AppCostOperation(name: operation.name, sql: operation.sql, iterations: counts[index],
                                            migrating: migrating[index], finished: finished, limit: operation.limit))
        }
        return results
    }

    /// Times `operation` up to `maxIterations` times or for about 3 seconds (at least 5 times),
    /// after a short warm-up. Returns the summary and the number of timed runs.
    private func measure(_ operation: Operation, on database: FerryDatabase, seed: UInt64, maxIterations: Int,
                         fixedCount: Bool = false) throws -> (LatencySummary, Int) {
        var rng = SeededGenerator(seed: seed)
        var recorder = LatencyRecorder(keepsSamples: false)
        let run = { (arguments: StatementArguments) throws in
            if operation.isWrite {
                try database.write { db in try db.execute(operation.sql, arguments) }
            } else {
                _ = try database.read { db in try db.fetchAll(operation.sql, arguments) }
            }
        }
        for _ in 0..<min(3, maxIterations) { try run(operation.arguments(&rng)) }  // warm-up: prepare, cache
        let start = now()
        var count = 0
        while count < maxIterations && (fixedCount || count < 5 || now() - start < 3) {
            let arguments = operation.arguments(&rng)
            let begin = now()
            try run(arguments)
            recorder.record(now() - begin)
            count += 1
        }
        return (recorder.summary, count)
    }
}

// MARK: - App simulation during auto-migration

/// A simulated app on its own thread: rounds of a primary-key lookup, an indexed range read and a
/// single-row insert, all through `FerryConnection`, with a pause between rounds.
final class AppSimulation: @unchecked Sendable {
    struct Settings: Sendable {
        var intervalMilliseconds: Int
        /// How long the app runs alone before and after the migration (its idle latency).
        var idleSeconds: Double
    }

    let settings: Settings
    private let database: FerryDatabase
    private let statements: AppStatements
    private let lock = NSLock()
    private var stopped = false
    private var failure: (any Error)?
    private let finished = DispatchSemaphore(value: 0)
    private var recorders: [String: LatencyRecorder] = [:]
    private var seed: UInt64
    private(set) var rounds = 0

    static let kinds = ["lookup", "range", "insert", "all"]

    init(database: FerryDatabase, workload: Workload, settings: Settings, seed: UInt64) throws {
        self.database = database
        self.statements = AppStatements(workload: workload)
        self.settings = settings
        self.seed = seed
        for kind in Self.kinds { recorders[kind] = LatencyRecorder(keepsSamples: false) }
    }

    /// Runs the app for `seconds` and returns its latency per kind.
    func run(seconds: Double) throws -> [String: LatencySummary] {
        start()
        Thread.sleep(forTimeInterval: seconds)
        return try stopThrowing()
    }

    func start() {
        let thread = Thread { [self] in
            var rng = SeededGenerator(seed: seed)
            do {
                while !isStopped {
                    try timed("lookup") { _ = try database.read { db in try db.fetchAll(statements.lookup, [.integer(statements.randomKey(&rng))]) } }
                    try timed("range") { _ = try database.read { db in try db.fetchAll(statements.range, [.integer(statements.rangeArgument(&rng))]) } }
                    let arguments = statements.insertArguments(&rng)
                    try timed("insert") { try database.write { db in try db.execute(statements.insert, arguments) } }
                    rounds += 1
                    Thread.sleep(forTimeInterval: Double(settings.intervalMilliseconds) / 1000)
                }
            } catch {
                lock.lock()
                failure = error
                lock.unlock()
            }
            finished.signal()
        }
        thread.start()
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    private func timed(_ kind: String, _ body: () throws -> Void) throws {
        let begin = now()
        try body()
        let seconds = now() - begin
        lock.lock()
        recorders[kind]?.record(seconds)
        recorders["all"]?.record(seconds)
        lock.unlock()
    }

    /// Stops the app (after its current round) and returns its latency per kind; a failure of the
    /// app's statements is reported as an empty result and printed.
    func stop() -> [String: LatencySummary] {
        do {
            return try stopThrowing()
        } catch {
            FileHandle.standardError.write(Data("app simulation failed: \(error)\n".utf8))
            return [:]
        }
    }

    private func stopThrowing() throws -> [String: LatencySummary] {
        lock.lock()
        stopped = true
        lock.unlock()
        finished.wait()
        lock.lock()
        defer { lock.unlock() }
        if let failure { throw failure }
        return recorders.mapValues(\.summary)
    }
}
