import FerrySQLite
import Foundation
@_spi(Benchmarks) import Ferry

/// The benchmark's data: a messenger-like table built once, then copied for every strategy so that
/// each one moves exactly the same rows from exactly the same files.
///
///     messages(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, sender TEXT, body TEXT,
///              sent_at REAL, cls INTEGER NOT NULL)
///
/// `conversation_id = id % 2000`, `sent_at` grows with `id`, `body` is random hex sized so a row
/// takes about `--row-width` bytes, `cls` is uniform in 0..<100 and not indexed (the filter column).
/// The target file also holds `conversations(id, title, pinned)` (2000 rows), the join partner of
/// the app-cost probe.
struct Workload: Sendable {
    let rows: Int
    let rowWidth: Int
    let selectivity: Double
    let encryption: SourceEncryption
    let placement: Placement
    let index: IndexLayout
    /// The source table is `WITHOUT ROWID`.
    let sourceWithoutRowid: Bool
    /// The source file uses a rollback journal instead of WAL.
    let sourceRollbackJournal: Bool
    /// Ferry leaves the source file's journal mode as it is (`MigrationSource.keepsJournalMode`).
    let keepSourceJournal: Bool
    /// Ferry's `walSizeLimit` in bytes.
    let walSizeLimit: Int
    /// Ferry's `yieldingStepLimit` (nil: one batch per step).
    let yieldingLimit: Duration?
    /// Ferry's `fixedBatchRows` (SPI): every batch moves this many rows, whatever the budget (nil: batches
    /// adapt to the budget). For runs whose work must not depend on the clock (instruction counts under
    /// callgrind, which runs the code 20-50 times slower).
    let fixedBatchRows: Int?
    let directory: URL
    /// Distinguishes the templates of several workloads in one scratch directory.
    let tag: String
    /// Source rows matching the filter (all rows without a filter), counted after building.
    private(set) var matchingRows = 0

    static let targetTable = "messages"
    static let conversations = 2000
    /// The columns, rowid alias first.
    static let columns = ["id", "conversation_id", "sender", "body", "sent_at", "cls"]

    init(options: BenchOptions, rows: Int, directory: URL, tag: String) {
        self.rows = rows
        self.rowWidth = options.rowWidth
        self.selectivity = options.selectivity
        self.encryption = options.encryption
        self.placement = options.placement
        self.index = options.index
        self.sourceWithoutRowid = options.sourceWithoutRowid
        self.sourceRollbackJournal = options.sourceRollbackJournal
        self.keepSourceJournal = options.keepSourceJournal
        self.walSizeLimit = options.walLimit << 20
        self.yieldingLimit = options.yieldingLimit > 0 ? .milliseconds(options.yieldingLimit) : nil
        self.fixedBatchRows = options.fixedBatchRows
        self.directory = directory
        self.tag = tag
    }

    /// The source table's name: `messages` in its own file, `messages_legacy` inside the target file.
    var sourceTable: String { placement == .crossFile ? "messages" : "messages_legacy" }
    /// The schema the source is attached as on the baselines' connections (`main` when same-file).
    var sourceSchema: String { placement == .crossFile ? "src" : "main" }
    var sourceCipher: Cipher? { encryption.cipher }
    /// The target file's cipher: plain, unless the source lives in it.
    var targetCipher: Cipher? { placement == .sameFile ? encryption.cipher : nil }

    /// The migration filter (nil: every row).
    var filterSQL: String? {
        selectivity >= 1 ? nil : "cls < \(max(1, Int((selectivity * 100).rounded())))"
    }

    /// The filter as a condition (`1` without a filter).
    var filterCondition: String { filterSQL ?? "1" }

    /// Hex characters of `body` so a row is about `rowWidth` bytes (about 30 go to the other columns
    /// and the record and cell headers).
    var bodyBytes: Int { max(1, (rowWidth - 30) / 2) }

    private var sourceTemplate: String { directory.appendingPathComponent("\(tag)-source-template.db").path }
    private var targetTemplate: String { directory.appendingPathComponent("\(tag)-target-template.db").path }

    static func tableSQL(_ name: String) -> String {
        "CREATE TABLE \(name)(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, sender TEXT, body TEXT, sent_at REAL, cls INTEGER NOT NULL)"
    }

    func indexSQL(_ table: String) -> String? {
        switch index {
        case .scattered: return "CREATE INDEX \(table)_by_conversation ON \(table)(conversation_id, sent_at)"
        case .sequential: return "CREATE INDEX \(table)_by_time ON \(table)(sent_at)"
        case .none: return nil
        }
    }

    /// Creates `table` with its index and fills it with `rows` rows.
    private func createFilledTable(_ table: String, on db: Connection) throws {
        try db.execute(Self.tableSQL(table) + (sourceWithoutRowid ? " WITHOUT ROWID" : ""))
        if let sql = indexSQL(table) { try db.execute(sql) }
        try db.transaction {
            try db.execute("""
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?1)
                INSERT INTO \(table) SELECT x, x % \(Self.conversations), 'user' || (x % 97), hex(randomblob(?2)),
                    1700000000 + x, abs(random()) % 100 FROM n
                """, [.integer(Int64(rows)), .integer(Int64(bodyBytes))])
        }
    }

    /// The empty target table and the app's conversations table.
    private func createTargetTables(on db: Connection) throws {
        try db.execute(Self.tableSQL(Self.targetTable))
        if let sql = indexSQL(Self.targetTable) { try db.execute(sql) }
        try db.execute("CREATE TABLE conversations(id INTEGER PRIMARY KEY, title TEXT NOT NULL, pinned INTEGER NOT NULL)")
        try db.execute("""
            WITH RECURSIVE n(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM n WHERE x < \(Self.conversations - 1))
            INSERT INTO conversations SELECT x, 'conversation ' || x, x % 500 = 7 FROM n
            """)
    }

    /// Builds the template files (closed, so their WAL is checkpointed and gone).
    mutating func build() throws {
        for path in [sourceTemplate, targetTemplate] { Self.removeDatabase(path) }
        switch placement {
        case .crossFile:
            let source = try Connection(path: sourceTemplate, configuration: .init(cipher: sourceCipher, journalMode: sourceRollbackJournal ? .delete : .wal))
            try createFilledTable(sourceTable, on: source)
            matchingRows = try source.scalar("SELECT count(*) FROM \(sourceTable) WHERE \(filterCondition)", as: Int.self) ?? 0
            source.close()
            let target = try Connection(path: targetTemplate, configuration: .init(cipher: targetCipher))
            try createTargetTables(on: target)
            target.close()
        case .sameFile:
            let target = try Connection(path: targetTemplate, configuration: .init(cipher: targetCipher))
            try createFilledTable(sourceTable, on: target)
            try createTargetTables(on: target)
            matchingRows = try target.scalar("SELECT count(*) FROM \(sourceTable) WHERE \(filterCondition)", as: Int.self) ?? 0
            target.close()
        }
    }

    /// Size of the source data in bytes (the source file, or the target template when same-file).
    var sourceBytes: Int {
        let path = placement == .crossFile ? sourceTemplate : targetTemplate
        return ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    /// Removes the templates.
    func removeTemplates() {
        for path in [sourceTemplate, targetTemplate] { Self.removeDatabase(path) }
    }

    // MARK: Copies

    /// Fresh copies of the template files for one strategy.
    struct Instance: Sendable {
        let targetPath: String
        let sourcePath: String?

        /// Removes the files (with their WAL and shared-memory files).
        func remove() {
            Workload.removeDatabase(targetPath)
            if let sourcePath { Workload.removeDatabase(sourcePath) }
        }

        /// WAL files of the instance.
        var walFiles: [String] { [targetPath + "-wal"] + (sourcePath.map { [$0 + "-wal"] } ?? []) }

        /// A watch on the WAL files' sizes.
        var walWatch: WALWatch { WALWatch([("target", targetPath + "-wal")] + (sourcePath.map { [("source", $0 + "-wal")] } ?? [])) }
    }

    /// Copies the templates for the strategy `name`.
    func instance(_ name: String) throws -> Instance {
        let target = directory.appendingPathComponent("\(tag)-\(name)-target.db").path
        Self.removeDatabase(target)
        try FileManager.default.copyItem(atPath: targetTemplate, toPath: target)
        guard placement == .crossFile else { return Instance(targetPath: target, sourcePath: nil) }
        let source = directory.appendingPathComponent("\(tag)-\(name)-source.db").path
        Self.removeDatabase(source)
        try FileManager.default.copyItem(atPath: sourceTemplate, toPath: source)
        return Instance(targetPath: target, sourcePath: source)
    }

    static func removeDatabase(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    // MARK: Connections

    /// The page cache, journal size limit and checkpoint settings of Ferry's own connections
    /// (`FerryDatabase.init`, `MigrationEngine.attachSources`), so the baselines differ from Ferry
    /// only in the statements they run.
    static let journalSizeLimit = 125 * 4096
    static let cacheSize = -16_000

    /// A plain `FerrySQLite.Connection` on the instance's target, with the source attached as `src`
    /// (cross-file), set up like Ferry's connections: `wal_autocheckpoint = 0` (a background
    /// checkpointer runs instead, see `SideCheckpointer`), the same page cache and journal limits.
    func connection(_ instance: Instance) throws -> Connection {
        let configuration = Connection.Configuration(cipher: targetCipher, prepareStatements: [
            "PRAGMA temp_store = MEMORY",
            "PRAGMA main.journal_size_limit = \(Self.journalSizeLimit)",
            "PRAGMA main.cache_size = \(Self.cacheSize)",
            "PRAGMA wal_autocheckpoint = 0",
        ])
        let db = try Connection(path: instance.targetPath, configuration: configuration)
        if let source = instance.sourcePath {
            try db.attach(path: source, as: "src", cipher: sourceCipher)
            try db.execute("PRAGMA src.journal_size_limit = \(Self.journalSizeLimit)")
            try db.execute("PRAGMA src.cache_size = \(Self.cacheSize)")
        }
        return db
    }

    /// The `FerryDatabase` of an instance with the plan `messages <- source [where filter]`.
    /// - Parameter yielding: false for one batch per step whatever `--yielding-limit` says.
    func ferryDatabase(_ instance: Instance, budget: Duration, yielding: Bool = true) throws -> FerryDatabase {
        let mapping = TableMapping(target: Self.targetTable, source: sourceTable, filter: filterSQL)
        let source: MigrationSource
        if let path = instance.sourcePath {
            source = MigrationSource(.file(path), cipher: sourceCipher, tables: [mapping], keepsJournalMode: keepSourceJournal)
        } else {
            source = MigrationSource(.targetFile, tables: [mapping])
        }
        var options = FerryDatabase.Options(stepBudget: budget, walSizeLimit: walSizeLimit, yieldingStepLimit: yielding ? yieldingLimit : nil)
        options.fixedBatchRows = fixedBatchRows
        return try FerryDatabase(path: instance.targetPath, configuration: .init(cipher: targetCipher),
                                 plan: MigrationPlan(sources: [source]), options: options)
    }

    /// `"T"(cols)` column list and the qualified source's column list, for the baselines' SQL.
    var columnList: String { Self.columns.joined(separator: ", ") }
    var qualifiedSource: String { "\(sourceSchema).\(sourceTable)" }
}
