// Micro-benchmarks that guard Ferry against regressions (issue 3's speed bar and issue 7's suite):
//
// - the SQL front end on a typical 200-character statement with one join: tokenize, parse, and parse + rewrite
//   of one migrating table with FerrySQL's `Rewriter` (target: under 20 µs median);
// - the engine's rewrite of the same statement on a database whose `orders` table migrates: from scratch, and
//   served from the rewrite cache keyed by SQL text (target: under 1 µs);
// - the app's reads while the table migrates (through the union of target and pending source rows) next to
//   the same reads once the migration finished: a primary-key lookup and an indexed scan of 100 rows;
// - one migration step of 1000 rows.
//
// Run with `swift package --package-path Benchmarks benchmark` (see Benchmarks/README.md).
import Benchmark
import FerrySQLite
@_spi(Benchmarks) import Ferry
@_spi(Benchmarks) import FerrySQL
import Foundation

/// A typical app statement: 190 bytes, one join, two parameters, ORDER BY and LIMIT.
let statement = """
    SELECT o.id, o.created_at, c.name, c.email, o.total FROM orders AS o JOIN customers c ON c.id = o.customer_id \
    WHERE o.status = ? AND o.created_at >= ? ORDER BY o.created_at DESC LIMIT 50
    """

/// The rows of the `orders` table each fixture migrates.
let orderCount = 100_000
/// Customers; each has `orderCount / customerCount` orders.
let customerCount = 1_000

/// Tolerances for `swift package benchmark thresholds check` (which compares p90 with the checked-in
/// `Thresholds/`) and `baseline check`: 20% on the wall clock (machines here drift 15-20% between runs),
/// 5% and a few allocations on malloc counts, which do not depend on the machine's load.
var thresholds: [BenchmarkMetric: BenchmarkThresholds] {
    [
        .wallClock: .init(relative: [.p50: 20, .p90: 20]),
        .mallocCountTotal: .init(relative: [.p50: 5, .p90: 5], absolute: [.p50: 5, .p90: 5]),
    ]
}

/// Wall clock and malloc count (where steady), `maxDuration` of samples after 3 warm-up iterations; with
/// `.kilo`, each sample times 1000 operations and the results are per operation.
func configuration(_ units: BenchmarkTimeUnits, scaling: BenchmarkScalingFactor = .one, mallocs: Bool = true,
                   maxIterations: Int = 100_000) -> Benchmark.Configuration {
    var thresholds = thresholds
    if !mallocs { thresholds[.mallocCountTotal] = nil }
    return .init(metrics: mallocs ? [.wallClock, .mallocCountTotal] : [.wallClock], timeUnits: units, warmupIterations: 3,
                 scalingFactor: scaling, maxDuration: .seconds(3), maxIterations: maxIterations, thresholds: thresholds)
}

let benchmarks: @Sendable () -> Void = {
    // MARK: SQL front end

    let frontEndRewrite = FrontEndBenchmarks.unionRewriter(tables: ["orders"])

    Benchmark("Tokenize", configuration: configuration(.nanoseconds, scaling: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try FrontEndBenchmarks.tokenize(statement)) }
    }
    Benchmark("Parse", configuration: configuration(.nanoseconds, scaling: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try FrontEndBenchmarks.parse(statement)) }
    }
    Benchmark("Parse and rewrite (FerrySQL)", configuration: configuration(.nanoseconds, scaling: .kilo)) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try frontEndRewrite(statement)) }
    }

    // MARK: The engine's rewrite

    Benchmark("Rewrite, cache miss", configuration: configuration(.nanoseconds, scaling: .kilo)) { benchmark in
        try Fixtures.migrating.read { db in
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { blackHole(try db.rewrittenSQL(statement, cached: false)) }
        }
    } setup: {
        _ = Fixtures.migrating
    }
    Benchmark("Rewrite, cache hit", configuration: configuration(.nanoseconds, scaling: .kilo)) { benchmark in
        try Fixtures.migrating.read { db in
            _ = try db.rewrittenSQL(statement)  // fills the cache
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { blackHole(try db.rewrittenSQL(statement)) }
        }
    } setup: {
        _ = Fixtures.migrating
    }

    // MARK: Reads while migrating vs after

    let lookup = "SELECT id, customer_id, status, created_at, total FROM orders WHERE id = ?"
    let scan = "SELECT id, status, total FROM orders WHERE customer_id = ?"
    for migrating in [true, false] {
        let label = migrating ? "migrating" : "finished"
        @Sendable func database() -> FerryDatabase { migrating ? Fixtures.migrating : Fixtures.finished }
        Benchmark("Point lookup, \(label)", configuration: configuration(.nanoseconds, scaling: .kilo)) { benchmark in
            let database = database()
            var id = 0
            for _ in benchmark.scaledIterations {
                id = (id + 7_919) % orderCount  // spread over target and source rows
                try database.read { db in blackHole(try db.fetchOne(lookup, [.integer(Int64(id + 1))])) }
            }
        } setup: {
            _ = database()
        }
        Benchmark("Scan of 100 rows, \(label)", configuration: configuration(.nanoseconds)) { benchmark in
            let database = database()
            var customer = 0
            for _ in benchmark.scaledIterations {
                customer = (customer + 37) % customerCount
                try database.read { db in
                    let rows = try db.fetchAll(scan, [.integer(Int64(customer))])
                    precondition(rows.count == orderCount / customerCount, "a scan returns every order of the customer")
                    blackHole(rows)
                }
            }
        } setup: {
            _ = database()
        }
    }

    // MARK: Migration step

    // Each iteration moves the next 1000 rows of a 300k-row source; the iteration cap keeps it from running dry.
    // Its malloc count depends on SQLite's page cache and the background checkpointer, so only time is checked.
    Benchmark("Step of 1000 rows", configuration: configuration(.microseconds, mallocs: false, maxIterations: 250)) { benchmark in
        let database = Fixtures.stepping
        for _ in benchmark.scaledIterations {
            let report = try database.step()
            precondition(report?.rowsMoved == 1_000, "every step moves 1000 rows")
        }
    } setup: {
        _ = Fixtures.stepping
    }
}

/// The databases the benchmarks use, each built on first use (the plugin may run each benchmark in a process
/// of its own) in a temporary directory removed at exit.
enum Fixtures {
    static let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-micro-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: Fixtures.directory) }
        return url
    }()
    /// `orders` half migrated from a legacy file.
    static let migrating = build("migrating", orders: orderCount, movedFraction: 0.5)
    /// The same data after the migration (and the source's cleanup) finished.
    static let finished = build("finished", orders: orderCount, movedFraction: 1)
    /// `orders` from a 300k-row source, none moved yet; every step moves 1000 rows.
    static let stepping = build("stepping", orders: 300_000, movedFraction: 0, batchRows: 1_000)

    static func build(_ name: String, orders: Int, movedFraction: Double, batchRows: Int = 10_000) -> FerryDatabase {
        do {
            return try database(name: name, orders: orders, movedFraction: movedFraction, batchRows: batchRows)
        } catch {
            fatalError("cannot build the benchmark database \(name): \(error)")
        }
    }

    /// An app database whose `orders` table migrates from `legacy-NAME.db`, with `movedFraction` of its rows
    /// moved (1: finished and the source cleaned up), and a `customers` table. Steps move `batchRows` rows.
    static func database(name: String, orders: Int, movedFraction: Double, batchRows: Int) throws -> FerryDatabase {
        let legacyPath = directory.appendingPathComponent("legacy-\(name).db").path
        let legacy = try Connection(path: legacyPath)
        try legacy.execute("""
            CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, status TEXT NOT NULL, created_at REAL NOT NULL, total REAL);
            CREATE INDEX orders_by_customer ON orders(customer_id);
            """)
        try legacy.transaction {
            try legacy.execute("""
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
                INSERT INTO orders SELECT x, x % \(customerCount), CASE x % 3 WHEN 0 THEN 'open' ELSE 'paid' END,
                       1700000000 + x, (x % 977) / 10.0 FROM n
                """, [.integer(Int64(orders))])
        }
        legacy.close()

        let plan = MigrationPlan(sources: [MigrationSource(.file(legacyPath), tables: [TableMapping(target: "orders", source: "orders")])])
        var options = FerryDatabase.Options()
        options.fixedBatchRows = batchRows
        let database = try FerryDatabase(path: directory.appendingPathComponent("app-\(name).db").path, plan: plan, options: options)
        try database.write { db in
            try db.execute("CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT)")
            try db.execute("""
                WITH RECURSIVE n(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
                INSERT INTO customers SELECT x, 'customer ' || x, 'c' || x || '@example.com' FROM n
                """, [.integer(Int64(customerCount - 1))])
        }
        if movedFraction >= 1 {
            try database.migrateAllBlocking()
        } else {
            let target = Int(Double(orders) * movedFraction)
            var moved = 0
            while moved < target, let report = try database.step() { moved += report.rowsMoved }
        }
        return database
    }
}
