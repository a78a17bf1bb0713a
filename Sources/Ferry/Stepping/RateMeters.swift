import FerrySQLite
/// Rows per second over the recent batches.
struct RateMeter: Sendable {
    private var samples: [(rows: Int, seconds: Double)] = []
    mutating func record(rows: Int, seconds: Double) {
        samples.append((rows, seconds))
        if samples.count > 50 { samples.removeFirst(samples.count - 50) }
    }
    var rowsPerSecond: Double {
        let rows = samples.reduce(0) { $0 + $1.rows }
        let seconds = samples.reduce(0) { $0 + $1.seconds }
        return seconds > 0 ? Double(rows) / seconds : 0
    }
}

/// Rate meters for all batches and for each table's own batches.
struct RateMeters: Sendable {
    private(set) var overall = RateMeter()
    private var perTable: [String: RateMeter] = [:]
    mutating func record(table: String, rows: Int, seconds: Double) {
        overall.record(rows: rows, seconds: seconds)
        perTable[table, default: RateMeter()].record(rows: rows, seconds: seconds)
    }
    func rowsPerSecond(table: String) -> Double { perTable[table]?.rowsPerSecond ?? 0 }
}
