import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// Readers see main's schema as the writer left it: a reader skips re-reading the schema table
/// while main's schema version stays where it last checked, and reads it again once it moved.
@Suite(.timeLimit(.minutes(2))) struct ReaderSchemaTests {
    /// The app drops its migrating table (its source still attached, awaiting cleanup) and creates
    /// one of that name again: every reader reads main's new table, never the source's rows.
    @Test(arguments: SchemaStatementTests.Placement.available)
    func readersFollowATableDroppedAndCreatedAgain(placement: SchemaStatementTests.Placement) throws {
        let pair = try SchemaStatementTests.Pair(placement: placement, rows: SchemaStatementTests.rows, stepFirst: true)
        let count = { () throws -> Int? in try pair.db.read { try $0.scalar("SELECT count(*) FROM t", as: Int.self) } }
        // Several reads, so that every reader of the pool holds main's schema with t migrating.
        for _ in 0..<8 { #expect(try count() == SchemaStatementTests.rows.count) }
        try pair.db.write { try $0.execute("DROP TABLE t") }
        for _ in 0..<8 { #expect(throws: (any Error).self) { try count() } }
        try pair.db.write { try $0.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER); INSERT INTO t VALUES (1, 42)") }
        for _ in 0..<8 {
            #expect(try count() == 1)
            #expect(try pair.db.read { try $0.scalar("SELECT a FROM t", as: Int.self) } == 42)
        }
        // A view created on it is served from the same snapshot as the table.
        try pair.db.write { try $0.execute("CREATE VIEW v AS SELECT a * 2 AS b FROM t") }
        for _ in 0..<8 { #expect(try pair.db.read { try $0.scalar("SELECT b FROM v", as: Int.self) } == 84) }
    }

    /// While a table migrates, the app creates a table whose name the source file also has: every
    /// reader reads main's new table, although its copy of main's schema predates it (SQLite
    /// resolves a name with the schemas it holds, and a name found only in the attached source
    /// would never make it look at main again). Plain and encrypted sources.
    @Test(arguments: [false, true])
    func readersFindATableCreatedInMainUnderASourcesTableName(encrypted: Bool) throws {
        let box = Sandbox()
        let cipher: Cipher? = encrypted ? .passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
        let legacy = try Connection(path: box.path("legacy.db"), configuration: .init(cipher: cipher))
        try legacy.execute("""
            CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40) INSERT INTO t SELECT i, i * 10 FROM n;
            CREATE TABLE u(x INTEGER); INSERT INTO u VALUES (1), (2), (3);
            """)
        legacy.close()
        let plan = MigrationPlan(sources: [MigrationSource(.file(box.path("legacy.db")), cipher: cipher, tables: [TableMapping(target: "t", source: "t")])])
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .fixedBatches(of: 2))
        defer { db.close() }
        try db.step()
        // Every reader of the pool loads main's schema, which has no u yet.
        for _ in 0..<8 { #expect(try db.read { try $0.scalar("SELECT count(*) FROM t", as: Int.self) } == 40) }
        try db.write { try $0.execute("CREATE TABLE u(x INTEGER); INSERT INTO u VALUES (42)") }
        #expect(try !db.progress().isFinished)
        for _ in 0..<8 {
            let row = try db.read { try $0.fetchOne("SELECT count(*), max(x) FROM u") }
            #expect(row?.values == [.integer(1), .integer(42)])
        }
    }
}
