import FerryTestSupport
import FerrySQLite
import Foundation
import Synchronization
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
    @Test(arguments: SQLiteEngine.supportsEncryption ? [false, true] : [false])
    func readersFindATableCreatedInMainUnderASourcesTableName(encrypted: Bool) throws {
        // A legacy file with t (20 rows, migrating) and u (1, 2, 3), which no mapping moves.
        let fixture = try SourceFileNamesTests.Fixture(encrypted: encrypted, stepFirst: true)
        defer { fixture.db.close() }  // (and keeps the fixture's files until then)
        let readers = FerryDatabase.Options().maximumReaderCount
        // Every reader of the pool (reads at once take one each) loads main's schema, which has no u yet.
        #expect(try Self.readsAtOnce(readers, on: fixture.db) { try $0.scalar("SELECT count(*) FROM t", as: Int.self) } == Array(repeating: 20, count: readers))
        try fixture.db.write { try $0.execute("CREATE TABLE u(x INTEGER); INSERT INTO u VALUES (42)") }
        #expect(try !fixture.db.progress().isFinished)
        // One read rebuilds the redirector for main's new schema (reading it afresh); the others
        // find it cached for their snapshot's schema version, with their old copy of the schema.
        #expect(try fixture.db.read { try $0.fetchOne("SELECT count(*), max(x) FROM u")?.values } == [.integer(1), .integer(42)])
        let rows = try Self.readsAtOnce(readers, on: fixture.db) { try $0.fetchOne("SELECT count(*), max(x) FROM u")?.values }
        #expect(rows == Array(repeating: [Value.integer(1), .integer(42)], count: readers))
    }

    /// Runs `body` in `count` reads at once, each on a thread of its own: all are inside
    /// `read { }` before any runs `body`, so each holds a reader connection of its own.
    private static func readsAtOnce<T: Sendable>(_ count: Int, on db: FerryDatabase,
                                                _ body: @escaping @Sendable (FerryConnection) throws -> T) throws -> [T] {
        let arrived = Mutex(0)
        let results = Mutex<[Result<T, any Error>]>([])
        let done = DispatchGroup()
        for _ in 0..<count {
            done.enter()
            Thread {
                let result = Result { () throws -> T in
                    try db.read { connection in
                        arrived.withLock { $0 += 1 }
                        let deadline = Date().addingTimeInterval(10)
                        while arrived.withLock({ $0 }) < count && Date() < deadline { usleep(200) }
                        return try body(connection)
                    }
                }
                results.withLock { $0.append(result) }
                done.leave()
            }.start()
        }
        done.wait()
        #expect(arrived.withLock { $0 } == count)
        return try results.withLock { $0 }.map { try $0.get() }
    }
}
