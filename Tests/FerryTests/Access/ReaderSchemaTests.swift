import FerryTestSupport
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
}
