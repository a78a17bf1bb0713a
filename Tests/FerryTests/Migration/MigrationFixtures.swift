import FerryTestSupport
import FerrySQLite
import Foundation
@_spi(Benchmarks) @testable import Ferry

/// The fixtures' legacy database.
extension Sandbox {

    /// Creates `legacy.db` with `messages(id INTEGER PRIMARY KEY, conversation_id, body)` holding
    /// ids 1...rows, conversation_id = id % 3, and an index on conversation_id.
    @discardableResult
    /// `options` end the table's definition (`WITHOUT ROWID`, say); `journalMode` is the file's.
    func makeLegacy(rows: Int, name: String = "legacy.db", cipher: Cipher? = nil, table: String = "messages",
                    declaration: String = "id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, body TEXT", options: String = "",
                    journalMode: DatabaseConfiguration.JournalMode = .wal) throws -> String {
        let path = self.path(name)
        let db = try Connection(path: path, configuration: .init(cipher: cipher, journalMode: journalMode))
        try db.execute("CREATE TABLE \(table)(\(declaration)) \(options)")
        try db.execute("CREATE INDEX \(table)_conversation ON \(table)(conversation_id)")
        try db.execute("""
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
            INSERT INTO \(table)(id, conversation_id, body) SELECT x, x % 3, 'message ' || x FROM n
            """, [.integer(Int64(rows))])
        return path
    }
}

/// Reads every row of a table as (id, conversation_id, body) ordered by id.
func messages(_ db: Connection, table: String = "main.messages") throws -> [[Value]] {
    try db.fetchAll("SELECT id, conversation_id, body FROM \(table) ORDER BY id").map(\.values)
}

extension MigrationPlan {
    /// Every row of `legacy`'s `messages` into the target's `messages`: the fixtures' usual plan.
    /// `cipher`: the legacy file's.
    static func messages(from legacy: String, cipher: Cipher? = nil) -> MigrationPlan {
        MigrationPlan(sources: [MigrationSource(.file(legacy), cipher: cipher, tables: [TableMapping(target: "messages", source: "messages")])])
    }
}

extension FerryDatabase.Options {
    /// The default options with batches (and cleanup chunks) of exactly `rows` rows, so that a
    /// scenario's work per step does not depend on the machine's speed.
    static func fixedBatches(of rows: Int) -> Self {
        var options = Self()
        options.fixedBatchRows = rows
        return options
    }
}

/// Starts the tests' child process (`Tests/FerryTestChild`) with `arguments`: how the crash and
/// ownership tests get a second process. Standard error goes nowhere.
func startTestChild(_ arguments: [String], standardOutput: Any = FileHandle.nullDevice) throws -> Process {
    let child = Process()
    let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    child.executableURL = builtExecutable(named: "FerryTestChild", packageRoot: packageRoot)
    child.arguments = arguments
    child.standardOutput = standardOutput
    child.standardError = FileHandle.nullDevice
    try child.run()
    return child
}
