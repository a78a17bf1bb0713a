import Foundation
import Ferry

// Migration throughput and step latency on a 1M-row table, next to a plain INSERT ... SELECT of
// the same rows measured in the same run.
//
//     swift run -c release FerryMigrationBenchmark [rows]
//
// For each source flavour (plain, SQLCipher 3 settings) it prints: the baseline (one
// INSERT ... SELECT over ATTACH in one transaction), Ferry's move phase (steps of the default
// 10 ms budget until every row moved) with step latency p50/p99/max, and the cleanup phase.

let rows = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 1_000_000
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-bench-\(ProcessInfo.processInfo.processIdentifier)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }

func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

func seconds(_ duration: Duration) -> Double {
    let (s, attoseconds) = duration.components
    return Double(s) + Double(attoseconds) / 1e18
}

func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

/// A legacy table like a messenger's: an INTEGER PRIMARY KEY and a secondary index.
func makeLegacy(_ name: String, cipher: Cipher?) throws -> String {
    let file = path(name)
    let db = try Connection(path: file, configuration: .init(cipher: cipher))
    try db.execute("""
        CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, sender TEXT, body TEXT, sent_at REAL);
        CREATE INDEX messages_by_conversation ON messages(conversation_id, sent_at);
        """)
    try db.transaction {
        try db.execute("""
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
            INSERT INTO messages SELECT x, x % 2000, 'user' || (x % 97), 'message body ' || hex(randomblob(16)), 1700000000 + x FROM n
            """, [.integer(Int64(rows))])
    }
    db.close()
    return file
}

func run(flavour: String, cipher: Cipher?) throws {
    // Baseline: the same rows copied by one INSERT ... SELECT, into a table with the same index.
    let baselineSource = try makeLegacy("baseline-\(flavour).db", cipher: cipher)
    let baseline = try Connection(path: path("baseline-target-\(flavour).db"))
    try baseline.execute("""
        CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, sender TEXT, body TEXT, sent_at REAL);
        CREATE INDEX messages_by_conversation ON messages(conversation_id, sent_at);
        """)
    try baseline.attach(path: baselineSource, as: "legacy", cipher: cipher)
    var start = ContinuousClock.now
    try baseline.transaction { try baseline.execute("INSERT INTO main.messages SELECT * FROM legacy.messages") }
    let baselineSeconds = seconds(ContinuousClock.now - start)
    baseline.close()

    // Ferry: the default budget, stepping until every row moved, then cleanup.
    let legacy = try makeLegacy("legacy-\(flavour).db", cipher: cipher)
    let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), cipher: cipher, tables: [TableMapping(target: "messages", source: "messages")])])
    let database = try FerryDatabase(path: path("app-\(flavour).db"), plan: plan)
    defer { database.close() }
    var latencies: [Double] = []
    var moved = 0
    start = ContinuousClock.now
    var cleanupStart: ContinuousClock.Instant?
    var deleted = 0
    while let report = try database.step() {
        switch report.kind {
        case .move:
            latencies.append(report.elapsed)
            moved += report.rowsMoved
        case .cleanup:
            if cleanupStart == nil { cleanupStart = .now }
            deleted += report.sourceRowsDeleted
        }
    }
    let end = ContinuousClock.now
    let moveSeconds = seconds((cleanupStart ?? end) - start)
    let cleanupSeconds = cleanupStart.map { seconds(end - $0) } ?? 0
    latencies.sort()
    func rate(_ count: Int, _ time: Double) -> String { String(format: "%9.0f rows/s", Double(count) / time) }
    print("\(flavour) source, \(rows) rows")
    print("  INSERT ... SELECT baseline  \(String(format: "%7.2f s", baselineSeconds))  \(rate(rows, baselineSeconds))")
    print("  Ferry move phase            \(String(format: "%7.2f s", moveSeconds))  \(rate(moved, moveSeconds))  "
          + "(\(latencies.count) steps; latency p50 \(String(format: "%.2f", percentile(latencies, 0.5) * 1000)) ms, "
          + "p99 \(String(format: "%.2f", percentile(latencies, 0.99) * 1000)) ms, max \(String(format: "%.2f", (latencies.last ?? 0) * 1000)) ms)")
    print("  Ferry cleanup of the source \(String(format: "%7.2f s", cleanupSeconds))  \(rate(deleted, max(cleanupSeconds, 1e-9)))")
}

print(FerryVersion.report)
try run(flavour: "plain", cipher: nil)
if SQLiteEngine.supportsEncryption {
    try run(flavour: "sqlcipher3", cipher: .passphrase("benchmark", settings: .sqlcipher3))
}
