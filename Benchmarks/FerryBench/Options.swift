import FerrySQLite
import ArgumentParser
import Foundation
import Ferry

/// How the source table is encrypted.
enum SourceEncryption: String, ExpressibleByArgument, CaseIterable, Codable, Sendable {
    case plain, sqlcipher4, sqlcipher3

    /// The cipher of the source file (nil: plain).
    var cipher: Cipher? {
        switch self {
        case .plain: return nil
        case .sqlcipher4: return .passphrase("ferry-bench-source", settings: .sqlcipher4)
        case .sqlcipher3: return .passphrase("ferry-bench-source", settings: .sqlcipher3)
        }
    }
}

/// Where the source table lives.
enum Placement: String, ExpressibleByArgument, CaseIterable, Codable, Sendable {
    /// The source is another file, attached (an old app version's database).
    case crossFile = "cross-file"
    /// The source is another table of the target file (reshaping a table in place).
    case sameFile = "same-file"
}

/// The secondary index of the table, which decides how many index pages a batch of consecutive
/// rowids dirties.
enum IndexLayout: String, ExpressibleByArgument, CaseIterable, Codable, Sendable {
    /// `(conversation_id, sent_at)` with `conversation_id = id % 2000`: a messenger's index; the
    /// keys of consecutive rows are far apart, so every row of a batch lands on its own index page.
    case scattered
    /// `(sent_at)`, increasing with the rowid: a batch appends to the index's last pages.
    case sequential
    /// No secondary index.
    case none
}

/// The strategies ferry-bench can run.
enum StrategyName: String, ExpressibleByArgument, CaseIterable, Codable, Sendable {
    /// (a) one `INSERT ... SELECT` + `DELETE` in one transaction: the floor.
    case floor
    /// (b) 1000-row keyset batches of plain SQL through `FerrySQLite.Connection`.
    case keyset
    /// (c) WCDB's statement shapes: one row per statement, ~100 rows per transaction (time-capped).
    case wcdb
    /// (d) plain SQL whose transactions each take the auto budget (a keyset copy, then a same-file
    /// source's deletes): the rate any migration that commits within the budget reaches, with no
    /// app and no Ferry.
    case budgeted
    /// Ferry, `step()` in a loop with the default budget (what `migrateAll()` does).
    case manual
    /// Ferry background auto-migration with the default schedule, with the app working meanwhile.
    case auto
    /// Ferry background auto-migration in drain mode.
    case drain
    /// App-side cost while migrating vs after (a separate migration with probes half-way).
    case appcost
}

/// Every option of ferry-bench, with the defaults of issue 7.
struct BenchOptions: ParsableArguments, Sendable {
    @Option(help: "Rows in the source table.")
    var rows: Int = 1_000_000

    @Option(name: .customLong("row-width"), help: "Approximate bytes per row (the body column is sized to fit).")
    var rowWidth: Int = 80

    @Option(help: "Fraction of rows the migration moves: 1.0 = no filter; below 1 a non-indexed filter (`cls < N`) matches about that fraction.")
    var selectivity: Double = 1.0

    @Option(help: "Encryption of the source: plain | sqlcipher4 | sqlcipher3 (the target file is plain; same-file: both).")
    var encryption: SourceEncryption = .plain

    @Option(help: "cross-file (source attached) | same-file (source table in the target file).")
    var placement: Placement = .crossFile

    @Option(help: "Secondary index: scattered (messenger-like, default) | sequential | none.")
    var index: IndexLayout = .scattered

    @Flag(name: .customLong("source-without-rowid"), help: "Declare the source table WITHOUT ROWID (Ferry keeps its place by primary key; the target stays a rowid table). The keyset and wcdb baselines need a rowid: run floor, manual, drain, auto or appcost.")
    var sourceWithoutRowid = false

    @Flag(name: .customLong("source-rollback-journal"), help: "Build the source file in rollback-journal mode (journal_mode=DELETE, as many apps' files are) instead of WAL; Ferry switches it to WAL when it registers the plan, unless --keep-source-journal. Cross-file only.")
    var sourceRollbackJournal = false

    @Flag(name: .customLong("keep-source-journal"), help: "Register the source with MigrationSource.keepsJournalMode: a rollback-journal source stays in that mode.")
    var keepSourceJournal = false

    @Option(help: "Ferry's step budget in milliseconds.")
    var budget: Int = 10

    @Flag(help: "Run every placement (cross-file, same-file) x source encryption (plain, sqlcipher3, sqlcipher4) with floor, drain and auto, each cell a run of its own, and print one table against issue 37's targets (the other options apply to every cell).")
    var matrix = false

    @Option(name: .customLong("auto-budget"), help: "Batch budget in milliseconds of the `auto` strategy (default: AutoMigrationSchedule's).")
    var autoBudget: Int?

    @Option(name: .customLong("auto-interval"), help: "Pause in milliseconds between batches of the `auto` strategy (default: AutoMigrationSchedule's).")
    var autoInterval: Int?

    @Option(name: .customLong("yielding-limit"), help: "Ferry's yieldingStepLimit in milliseconds: how long a step goes on moving batches while no app write waits (0: one batch per step).")
    var yieldingLimit: Int = 250

    @Option(name: .customLong("fixed-batch-rows"), help: "Every Ferry batch moves this many rows, whatever the budget (for runs whose work must not depend on the clock, e.g. instruction counts under callgrind).")
    var fixedBatchRows: Int?

    @Flag(name: .customLong("auto-drain"), help: "Run the `auto` strategy (the app working) in drain mode: steps go on moving while no app write waits.")
    var autoDrain = false

    @Option(name: .customLong("wal-limit"), help: "Ferry's walSizeLimit in MiB: the WAL size over which a step first waits for a checkpoint.")
    var walLimit: Int = 64

    @Option(name: .customLong("strategies"), help: "Strategies to run, comma-separated: \(StrategyName.allCases.map(\.rawValue).joined(separator: ",")).")
    var strategyList: String = StrategyName.allCases.map(\.rawValue).joined(separator: ",")

    @Option(name: .customLong("wcdb-seconds"), help: "Time cap of WCDB's shapes on the full table; its rows/s is extrapolated from that window.")
    var wcdbSeconds: Double = 10

    @Option(name: .customLong("scaling-rows"), help: "With a filter: the smaller size for the linear/quadratic check of WCDB's shapes (it also runs at twice this size).")
    var scalingRows: Int = 5_000

    @Option(name: .customLong("app-interval"), help: "Pause in milliseconds between the simulated app's operation rounds during auto-migration.")
    var appInterval: Int = 5

    @Flag(help: "Print the report as one JSON object instead of the human table.")
    var json = false

    @Option(name: .customLong("json-file"), help: "Also write the JSON object to this file.")
    var jsonFile: String?

    @Option(help: "Write an SVG of step latency over time (one line per strategy) to this file.")
    var plot: String?

    @Option(name: .customLong("scratch"), help: "Scratch directory for the databases (default: a new temporary directory, removed afterwards).")
    var scratch: String?

    @Flag(help: "Also time the stepper's statements one by one on a replica of its batch (slow; for the performance investigation).")
    var investigate = false

    @Option(name: .customLong("investigate-variants"), parsing: .upToNextOption, help: "With --investigate: only these variants (1-based numbers).")
    var investigateVariants: [Int] = []

    @Flag(name: .customLong("explain-app"), help: "With appcost: print the statements Ferry runs for each app operation half-way, their query plans, and where a read's time goes.")
    var explainApp = false

    @Option(name: .customLong("app-spin"), help: "With --explain-app: also run each app operation through Ferry for this many seconds, half-way and once finished (for perf record).")
    var appSpin: Double = 0

    @Option(name: .customLong("explain-operations"), parsing: .upToNextOption, help: "With --explain-app: only these operations (1-based numbers, in the app-cost table's order).")
    var explainOperations: [Int] = []

    @Flag(name: .customLong("spin-pending-keys"), help: "With --app-spin: the half-way spin of a keyed operation draws only keys that have not moved, each once (where a pending-key write's time goes).")
    var spinPendingKeys = false

    @Flag(help: "Keep the scratch databases.")
    var keep = false

    /// The strategies asked for.
    var strategies: [StrategyName] {
        strategyList.split(separator: ",").compactMap { StrategyName(rawValue: $0.trimmingCharacters(in: .whitespaces)) }
    }

    func validate() throws {
        for part in strategyList.split(separator: ",") where StrategyName(rawValue: part.trimmingCharacters(in: .whitespaces)) == nil {
            throw ValidationError("unknown strategy \(part); choose from \(StrategyName.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard rows >= 1000 else { throw ValidationError("--rows must be at least 1000") }
        guard rowWidth >= 40 else { throw ValidationError("--row-width must be at least 40") }
        guard selectivity > 0 && selectivity <= 1 else { throw ValidationError("--selectivity must be in (0, 1]") }
        guard budget >= 1 else { throw ValidationError("--budget must be at least 1 ms") }
        if sourceRollbackJournal && placement != .crossFile {
            throw ValidationError("--source-rollback-journal: a same-file source shares the target file's WAL; use --placement cross-file")
        }
        if sourceWithoutRowid && (strategies.contains(.keyset) || strategies.contains(.budgeted) || strategies.contains(.wcdb)) {
            throw ValidationError("--source-without-rowid: the keyset, budgeted and wcdb baselines read the source by rowid; leave them out of --strategies")
        }
        if encryption != .plain && !SQLiteEngine.supportsEncryption {
            throw ValidationError("--encryption \(encryption.rawValue) needs the SQLCipher trait (the default build)")
        }
    }

    /// True when strategy `name` was asked for.
    func runs(_ name: StrategyName) -> Bool { strategies.contains(name) }

    /// The budget as a duration.
    var budgetDuration: Duration { .milliseconds(budget) }
}
