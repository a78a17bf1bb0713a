import FerrySQLite
import Foundation
@_spi(Benchmarks) import Ferry

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

/// App-side cost while migrating, as ratios against the same data after its migration finished:
/// one copy of the files is stepped to half-way (large steps, to get there fast), a second copy is
/// migrated to the end (with cleanup), both are closed and opened again (so their WALs are
/// checkpointed away), and every operation is timed on both in turns, with no step running and the
/// same arguments on both (`measure`). Ratios are of medians.
struct AppCostProbe {
    let workload: Workload
    /// Also print, for each operation on the half-migrated table, the statements Ferry runs, their
    /// query plans, and the read's time split (through `FerryConnection` / the rewritten SQL on a
    /// plain connection / the app's SQL on the target alone).
    var explains = false
    /// With `explains`: run each operation through `FerryConnection` for this many seconds on the
    /// half-migrated table (for a sampling profiler: `perf record -g`).
    var spinSeconds: Double = 0
    /// With `explains`: only these operations (1-based numbers; empty: all).
    var explainedOperations: [Int] = []
    /// With `spinSeconds`: the half-way spin of a keyed operation uses only keys that have not
    /// moved, each once, instead of random keys (which soon hit rows the spin itself moved).
    var spinsPendingKeys = false

    struct Operation {
        let name: String
        let sql: String
        let isWrite: Bool
        let iterations: Int
        /// Limit of issue 17 for the ratio (issue 7 had 1.3x, 1.5x, 1.3x, 1.5x, 1.5x, 2x, 2x).
        let limit: Double
        /// The first argument is a key of the table (the report splits its times by moved and pending keys).
        var keyedByFirstArgument = false
        let arguments: (inout SeededGenerator) -> StatementArguments
    }

    func run(log: (String) -> Void) throws -> [AppCostOperation] {
        let instance = try workload.instance("appcost")
        defer { instance.remove() }
        let finishedInstance = try workload.instance("appcost-finished")
        defer { finishedInstance.remove() }
        // One batch per step: a yielding step would move the whole table at once.
        var database = try workload.ferryDatabase(instance, budget: .milliseconds(10), yielding: false)
        defer { database.close() }
        let sql = AppStatements(workload: workload)
        let operations: [Operation] = [
            Operation(name: "primary-key lookup", sql: sql.lookup, isWrite: false, iterations: 3000, limit: 1.2, keyedByFirstArgument: true) { .positional([.integer(sql.randomKey(&$0))]) },
            Operation(name: "indexed range, ORDER BY … LIMIT 100", sql: sql.range, isWrite: false, iterations: 500, limit: 1.2) { .positional([.integer(sql.rangeArgument(&$0))]) },
            Operation(name: "full-table aggregate", sql: sql.aggregate, isWrite: false, iterations: 10, limit: 1.2) { _ in .none },
            Operation(name: "join with conversations", sql: sql.join, isWrite: false, iterations: 300, limit: 1.3) { .positional([.integer(Int64.random(in: 0..<500, using: &$0))]) },
            Operation(name: "single-row INSERT", sql: sql.insert, isWrite: true, iterations: 1000, limit: 1.3) { sql.insertArguments(&$0) },
            Operation(name: "UPDATE by key", sql: sql.update, isWrite: true, iterations: 1000, limit: 1.5, keyedByFirstArgument: true) { .positional([.integer(sql.randomKey(&$0)), .text("updated \(UInt32.random(in: 0...UInt32.max, using: &$0))")]) },
            Operation(name: "DELETE by key", sql: sql.delete, isWrite: true, iterations: 1000, limit: 1.5, keyedByFirstArgument: true) { .positional([.integer(sql.randomKey(&$0))]) },
        ]

        // Half-way: every step until half the matching rows moved, then nothing steps.
        log("app cost: stepping to half-way")
        var moved = 0
        while moved < workload.matchingRows / 2, let report = try database.step(budget: .milliseconds(100)) {
            moved += report.rowsMoved
        }
        // The same data in a second copy, migrated to the end (with cleanup).
        log("app cost: migrating a second copy to the end")
        var finished = try workload.ferryDatabase(finishedInstance, budget: .milliseconds(10), yielding: false)
        defer { finished.close() }
        try finished.migrateAllBlocking(budget: .milliseconds(100))
        // Both probes start from a settled file: closing checkpoints and removes the WAL, so no
        // background checkpoint of the migration's writes runs during the probes.
        database.close()
        finished.close()
        database = try workload.ferryDatabase(instance, budget: .milliseconds(10))
        finished = try workload.ferryDatabase(finishedInstance, budget: .milliseconds(10))
        if explains { try explain(operations, on: database, instance: instance, movedRows: moved, log: log) }
        if explains && spinSeconds > 0 {
            for (index, operation) in operations.enumerated() where explainedOperations.isEmpty || explainedOperations.contains(index + 1) {
                log("explain: \(operation.name), finished table")
                try spin(operation, seed: UInt64(500 + index), on: finished, label: "finished spin", log: log)
            }
        }
        log("app cost: probing the half-migrated and the finished table in turns (\(moved) of \(workload.matchingRows) rows moved)")
        // Without a filter the cursor is the largest moved rowid: a key at or below it moved (Ferry
        // then serves a statement pinned to it from the target alone, see `KeyShortcut`).
        let cursor: Int64? = workload.selectivity >= 1 ? Int64(moved) : nil
        var results: [AppCostOperation] = []
        for (index, operation) in operations.enumerated() {
            let paired = try measure(operation, migrating: database, finished: finished, seed: UInt64(100 + index),
                                     splittingAt: operation.keyedByFirstArgument ? cursor : nil)
            results.append(AppCostOperation(name: operation.name, sql: operation.sql, iterations: paired.count,
                                            migrating: paired.migrating.all, finished: paired.finished.all, limit: operation.limit,
                                            movedKeys: paired.migrating.moved, pendingKeys: paired.migrating.pending,
                                            movedKeysFinished: paired.finished.moved, pendingKeysFinished: paired.finished.pending))
        }
        return results
    }

    /// `--app-spin`: runs `operation` through Ferry for `spinSeconds` (a window for `perf record`)
    /// and logs its mean time.
    /// - Parameter pendingKeysAbove: the cursor of a table half-way: the first argument runs through
    ///   the keys above it in a scattered order, each once.
    private func spin(_ operation: Operation, seed: UInt64, on database: FerryDatabase, label: String,
                      pendingKeysAbove cursor: Int64? = nil, log: (String) -> Void) throws {
        var rng = SeededGenerator(seed: seed)
        let start = now()
        var count = 0
        let pendingCount = Int64(workload.rows) - (cursor ?? 0)
        while now() - start < spinSeconds {
            var arguments = operation.arguments(&rng)
            if let cursor, pendingCount > 0, case .positional(var values) = arguments, !values.isEmpty {
                // A stride through the pending keys: 7,919 is prime, so each key comes once per round
                // (unless their count is a multiple of it).
                let offset = (Int64(count) * 7919) % pendingCount
                values[0] = .integer(cursor + 1 + offset)
                arguments = .positional(values)
            }
            if operation.isWrite {
                try database.write { db in try db.execute(operation.sql, arguments) }
            } else {
                _ = try database.read { db in try db.fetchAll(operation.sql, arguments) }
            }
            count += 1
        }
        log(String(format: "  %@: %d runs in %.1f s (%.4f ms each)", label, count, spinSeconds, spinSeconds * 1000 / Double(count)))
    }

    /// `--explain-app`: what each operation runs while migrating, and where a read's time goes.
    private func explain(_ operations: [Operation], on database: FerryDatabase, instance: Workload.Instance,
                         movedRows: Int, log: (String) -> Void) throws {
        let plain = try workload.connection(instance)
        defer { plain.close() }
        if spinSeconds > 0 {
            for label in ["database_list", "has moved", "BEGIN/COMMIT", "schema_version"] {
                let start = now()
                var count = 0
                while now() - start < 1 {
                    switch label {
                    case "database_list": _ = try plain.fetchAll("PRAGMA database_list")
                    case "has moved": _ = try plain.fileHasMoved(schema: "src")
                    case "schema_version": _ = try plain.fetchAll("PRAGMA schema_version")
                    default: try plain.execute("BEGIN"); try plain.execute("COMMIT")
                    }
                    count += 1
                }
                log(String(format: "  plain %@: %.4f ms each", label, 1000 / Double(count)))
            }
            for label in ["empty read", "SELECT 1", "empty write"] {
                let start = now()
                var count = 0
                while now() - start < 1 {
                    switch label {
                    case "empty read": _ = try database.read { _ in 0 }
                    case "SELECT 1": _ = try database.read { db in try db.fetchAll("SELECT 1") }
                    default: try database.write { _ in }
                    }
                    count += 1
                }
                log(String(format: "  spin %@: %.4f ms each", label, 1000 / Double(count)))
            }
        }
        for (index, operation) in operations.enumerated() where explainedOperations.isEmpty || explainedOperations.contains(index + 1) {
            let (moves, statement) = try database.read { db in try db.redirectedStatements(operation.sql) }
            log("explain: \(operation.name)")
            var planGenerator = SeededGenerator(seed: UInt64(300 + index))
            // Ferry attaches its sources as ferry_src_N: attach the source under that name too.
            if let range = statement.range(of: #"ferry_src_[0-9]+"#, options: .regularExpression),
               let path = instance.sourcePath, try plain.fetchAll("PRAGMA database_list").allSatisfy({ try $0.get(1, as: String.self) != String(statement[range]) }) {
                try plain.attach(path: path, as: String(statement[range]), cipher: workload.sourceCipher)
            }
            for (number, sql) in (moves + [statement]).enumerated() {
                log("  [\(number + 1)\(number < moves.count ? ", move" : "")] \(sql)")
                guard !sql.uppercased().hasPrefix("EXPLAIN") else { continue }
                do {
                    for row in try plain.fetchAll("EXPLAIN QUERY PLAN " + sql, operation.arguments(&planGenerator)) {
                        log("      plan: \(try row.get(3, as: String.self))")
                    }
                } catch {
                    log("      plan: not available on a plain connection (\(error))")
                }
            }
            if spinSeconds > 0 {
                // Without a filter the cursor is the largest moved rowid (see `run`).
                let pendingKeysAbove = spinsPendingKeys && operation.keyedByFirstArgument && workload.selectivity >= 1 ? Int64(movedRows) : nil
                try spin(operation, seed: UInt64(400 + index), on: database, label: "spin", pendingKeysAbove: pendingKeysAbove, log: log)
            }
            guard !operation.isWrite else { continue }
            let iterations = min(operation.iterations, 1000)
            func time(_ body: (StatementArguments) throws -> Void) throws -> Double {
                var rng = SeededGenerator(seed: UInt64(300 + index))
                var recorder = LatencyRecorder(keepsSamples: false)
                for _ in 0..<iterations {
                    let arguments = operation.arguments(&rng)
                    let begin = now()
                    try body(arguments)
                    recorder.record(now() - begin)
                }
                return recorder.summary.p50
            }
            let ferry = try time { arguments in _ = try database.read { db in try db.fetchAll(operation.sql, arguments) } }
            // SQLite's virtual-machine operations per run: the statements' work, without the clock.
            var rewrittenSteps = 0, targetAloneSteps = 0
            func runPlain(_ sql: String, _ arguments: StatementArguments, counting steps: inout Int) throws {
                try plain.execute("BEGIN")
                defer { try? plain.execute("COMMIT") }
                let prepared = try plain.cachedStatement(sql)
                let before = prepared.virtualMachineSteps
                _ = try prepared.fetchAll(arguments)
                steps += prepared.virtualMachineSteps - before
            }
            let rewritten = try time { arguments in try runPlain(statement, arguments, counting: &rewrittenSteps) }
            let targetAlone = try time { arguments in try runPlain(operation.sql, arguments, counting: &targetAloneSteps) }
            log(String(format: "  p50 ms: through Ferry %.4f, rewritten SQL on a plain connection %.4f, app SQL on the target alone %.4f",
                       ferry, rewritten, targetAlone))
            log(String(format: "  SQLite VM operations per run: rewritten SQL %.0f, app SQL on the target alone %.0f (%.2fx)",
                       Double(rewrittenSteps) / Double(iterations), Double(targetAloneSteps) / Double(iterations),
                       Double(rewrittenSteps) / Double(max(1, targetAloneSteps))))
        }
    }

    /// The latencies of one operation on one database, with a keyed operation's split by whether
    /// its key had moved (at or below the half-way cursor) or was pending.
    struct Latencies {
        var all: LatencySummary
        var moved: LatencySummary?
        var pending: LatencySummary?
    }

    /// Times `operation` on the half-migrated and the finished database in turns: blocks of about a
    /// twentieth of its runs, alternating which database goes first (ABBA), each database with the
    /// same arguments in the same order. Drift of the machine (the disk's hour, another process)
    /// then falls on both sides alike: timed one after the other, the same binary's ratios moved by
    /// up to 2x between runs. Runs `operation.iterations` times on each side, or about 6 seconds in
    /// all (at least one block), after a short warm-up of each.
    /// - Parameter cursor: for an operation whose first argument is the key, also split the
    ///   latencies by keys at or below `cursor` (moved) and above it (pending).
    private func measure(_ operation: Operation, migrating: FerryDatabase, finished: FerryDatabase, seed: UInt64,
                         splittingAt cursor: Int64? = nil) throws -> (migrating: Latencies, finished: Latencies, count: Int) {
        struct Side {
            let database: FerryDatabase
            var rng: SeededGenerator
            var all = LatencyRecorder(keepsSamples: false)
            var moved = LatencyRecorder(keepsSamples: false)
            var pending = LatencyRecorder(keepsSamples: false)
        }
        // The same seed on both sides: both run the same arguments in the same order.
        var sides = [Side(database: migrating, rng: SeededGenerator(seed: seed)), Side(database: finished, rng: SeededGenerator(seed: seed))]
        func runOnce(_ side: inout Side, timed: Bool) throws {
            let arguments = operation.arguments(&side.rng)
            let begin = now()
            if operation.isWrite {
                try side.database.write { db in try db.execute(operation.sql, arguments) }
            } else {
                _ = try side.database.read { db in try db.fetchAll(operation.sql, arguments) }
            }
            let elapsed = now() - begin
            guard timed else { return }
            side.all.record(elapsed)
            if let cursor, case .positional(let values) = arguments, case .integer(let key)? = values.first {
                if key <= cursor { side.moved.record(elapsed) } else { side.pending.record(elapsed) }
            }
        }
        for index in sides.indices { for _ in 0..<min(3, operation.iterations) { try runOnce(&sides[index], timed: false) } }  // warm-up: prepare, cache
        let block = max(1, operation.iterations / 20)
        let start = now()
        var count = 0
        var round = 0
        while count < operation.iterations && (count == 0 || now() - start < 6) {
            let runs = min(block, operation.iterations - count)
            for index in (round % 2 == 0 ? [0, 1] : [1, 0]) {
                for _ in 0..<runs { try runOnce(&sides[index], timed: true) }
            }
            count += runs
            round += 1
        }
        let latencies = sides.map { side in
            Latencies(all: side.all.summary, moved: cursor == nil ? nil : side.moved.summary, pending: cursor == nil ? nil : side.pending.summary)
        }
        return (latencies[0], latencies[1], count)
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
    /// The slowest operations of the latest run, each with when it ended (seconds since `origin`).
    private var slowestOperations = SlowestSteps(keep: 3)
    /// Where the times of `slowest` count from (monotonic seconds; the run's start by default).
    private var origin = now()

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

    /// Starts the app on its own thread.
    /// - Parameter origin: what the times of `slowest` count from (monotonic seconds).
    func start(origin: Double = now()) {
        self.origin = origin
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
        let end = now()
        let seconds = end - begin
        lock.lock()
        recorders[kind]?.record(seconds)
        recorders["all"]?.record(seconds)
        slowestOperations.consider(seconds, at: end - origin, what: kind)
        lock.unlock()
    }

    /// The slowest operations so far: (seconds, when it ended in seconds since `origin`, kind).
    var slowest: [(seconds: Double, at: Double, what: String)] {
        lock.lock()
        defer { lock.unlock() }
        return slowestOperations.entries
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
