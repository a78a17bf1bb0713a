import FerrySQLite
/// Rows per second over the recent batches.
struct RateMeter: Sendable {
    private var samples: [(rows: Int, elapsed: Duration)] = []
    mutating func record(rows: Int, elapsed: Duration) {
        samples.append((rows, elapsed))
        if samples.count > 50 { samples.removeFirst(samples.count - 50) }
    }
    var rowsPerSecond: Double {
        let rows = samples.reduce(0) { $0 + $1.rows }
        let elapsed = samples.reduce(Duration.zero) { $0 + $1.elapsed }
        return elapsed > .zero ? Double(rows) / elapsed.seconds : 0
    }
}

/// Rate meters for all batches and for each table's own batches.
struct RateMeters: Sendable {
    private(set) var overall = RateMeter()
    private var perTable: [String: RateMeter] = [:]
    mutating func record(table: String, rows: Int, elapsed: Duration) {
        overall.record(rows: rows, elapsed: elapsed)
        perTable[table, default: RateMeter()].record(rows: rows, elapsed: elapsed)
    }
    func rowsPerSecond(table: String) -> Double { perTable[table]?.rowsPerSecond ?? 0 }
}
