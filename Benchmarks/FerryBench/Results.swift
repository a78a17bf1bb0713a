import Foundation

/// What one strategy measured.
struct StrategyResult: Encodable, Sendable {
    /// The strategy's key (`floor`, `keyset`, `wcdb`, `manual`, `auto`, `drain`).
    let name: String
    /// A human title.
    let title: String
    /// Rows moved (for a time-capped run: in the window).
    var rows = 0
    /// Seconds until every row was moved (a baseline deletes in the same transactions, so this is
    /// its whole run; Ferry deletes source rows afterwards, in its cleanup phase).
    var moveSeconds = 0.0
    /// Ferry's cleanup phase: deleting the moved rows from the source after the table finished.
    var cleanupSeconds: Double?
    /// Moved rows per second over the move phase.
    var moveRowsPerSecond = 0.0
    /// Rows per second over move and cleanup together.
    var totalRowsPerSecond = 0.0
    /// True when the run was capped by time and its rate is extrapolated from the window.
    var extrapolated = false
    /// Latency of each step or batch over the move phase, and of cleanup steps.
    var moveLatency: LatencySummary?
    var cleanupLatency: LatencySummary?
    /// Every step (move and cleanup): what the step-latency targets apply to.
    var allLatency: LatencySummary?
    /// What the latency measures.
    var latencyKind = ""
    /// Median rows per batch.
    var medianBatchRows: Int?
    /// Peak resident memory above the idle footprint while this strategy ran (bytes).
    var peakMemoryAboveIdle: Int?
    var notes: [String] = []

    init(name: String, title: String) {
        self.name = name
        self.title = title
    }

    var totalSeconds: Double { moveSeconds + (cleanupSeconds ?? 0) }

    /// Fills the rates from rows and times.
    mutating func computeRates() {
        moveRowsPerSecond = moveSeconds > 0 ? Double(rows) / moveSeconds : 0
        totalRowsPerSecond = totalSeconds > 0 ? Double(rows) / totalSeconds : 0
    }
}

/// One operation of the app-cost probe: the same statements on the table half-migrated (no step
/// runs meanwhile) and on the finished table.
struct AppCostOperation: Encodable, Sendable {
    let name: String
    let sql: String
    let iterations: Int
    let migrating: LatencySummary
    let finished: LatencySummary
    /// Median while migrating / median on the finished table.
    var ratio: Double { finished.p50 > 0 ? migrating.p50 / finished.p50 : 0 }
    let limit: Double
    /// For an operation by key, while migrating: the keys that had moved, and those still pending.
    var movedKeys: LatencySummary? = nil
    var pendingKeys: LatencySummary? = nil
    /// The same keys on the finished table (the probe runs the same arguments on both).
    var movedKeysFinished: LatencySummary? = nil
    var pendingKeysFinished: LatencySummary? = nil

    enum CodingKeys: String, CodingKey { case name, sql, iterations, migrating, finished, ratio, limit, movedKeys, pendingKeys, movedKeysFinished, pendingKeysFinished }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(sql, forKey: .sql)
        try c.encode(iterations, forKey: .iterations)
        try c.encode(migrating, forKey: .migrating)
        try c.encode(finished, forKey: .finished)
        try c.encode(ratio, forKey: .ratio)
        try c.encode(limit, forKey: .limit)
        try c.encodeIfPresent(movedKeys, forKey: .movedKeys)
        try c.encodeIfPresent(pendingKeys, forKey: .pendingKeys)
        try c.encodeIfPresent(movedKeysFinished, forKey: .movedKeysFinished)
        try c.encodeIfPresent(pendingKeysFinished, forKey: .pendingKeysFinished)
    }
}

/// App-operation latency with no migration running and while auto-migration (default schedule) runs.
struct AppLatencyResult: Encodable, Sendable {
    /// Per operation kind (`lookup`, `range`, `insert`, and `all`).
    var idle: [String: LatencySummary] = [:]
    var duringAutoMigration: [String: LatencySummary] = [:]
    var afterFinish: [String: LatencySummary] = [:]
    /// The worst rise of p99 over the kinds, in ms (during - idle).
    var worstP99Rise: Double {
        duringAutoMigration.compactMap { kind, during in idle[kind].map { during.p99 - $0.p99 } }.max() ?? 0
    }
}

/// How a strategy's time grows with the table (with a non-indexed filter): exponent 1 is linear,
/// 2 quadratic.
struct ScalingResult: Encodable, Sendable {
    let strategy: String
    let smallRows: Int
    let largeRows: Int
    let smallSeconds: Double
    let largeSeconds: Double
    var exponent: Double { log(largeSeconds / smallSeconds) / log(Double(largeRows) / Double(smallRows)) }

    enum CodingKeys: String, CodingKey { case strategy, smallRows, largeRows, smallSeconds, largeSeconds, exponent }
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(strategy, forKey: .strategy)
        try c.encode(smallRows, forKey: .smallRows)
        try c.encode(largeRows, forKey: .largeRows)
        try c.encode(smallSeconds, forKey: .smallSeconds)
        try c.encode(largeSeconds, forKey: .largeSeconds)
        try c.encode(exponent, forKey: .exponent)
    }
}

/// One issue-7 target with its measured value.
struct TargetResult: Encodable, Sendable {
    let target: String
    let measured: String
    /// nil: not measured in this run (strategy not run, or not applicable).
    let pass: Bool?
    var note: String?

    var verdict: String { pass.map { $0 ? "PASS" : "MISS" } ?? "n/a" }
}

/// Everything one run measured.
struct BenchReport: Encodable, Sendable {
    var date = ""
    var ferryVersion = ""
    var sqliteVersion = ""
    var cipherVersion: String?
    var engine = ""
    var cores = ProcessInfo.processInfo.activeProcessorCount
    var options: [String: String] = [:]
    var sourceRows = 0
    var matchingRows = 0
    var sourceFileBytes = 0
    var strategies: [StrategyResult] = []
    var appCost: [AppCostOperation] = []
    var appLatency: AppLatencyResult?
    var scaling: [ScalingResult] = []
    var investigation: [InvestigationResult] = []
    var targets: [TargetResult] = []

    func strategy(_ name: StrategyName) -> StrategyResult? { strategies.first { $0.name == name.rawValue } }
}
