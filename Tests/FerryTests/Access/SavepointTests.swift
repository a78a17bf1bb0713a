import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// `inSavepoint` inside `write { }` on a migrating table: a body that throws undoes its writes and
/// the moves Ferry made for them, a body that returns keeps them, savepoints nest, and a `DROP
/// TABLE` of the migrating table undone by a savepoint leaves the table migrating. Every placement.
@Suite(.timeLimit(.minutes(2))) struct SavepointTests {
    typealias Pair = SchemaStatementTests.Pair
    struct Undo: Error {}

    @Test(arguments: SchemaStatementTests.Placement.available)
    func savepointsUndoWritesAndTheirMoves(placement: SchemaStatementTests.Placement) throws {
        let pair = try Pair(placement: placement, rows: SchemaStatementTests.rows, stepFirst: true)  // rows 1-2 moved
        let kept = try pair.db.write { db in
            try db.inSavepoint { try db.execute("UPDATE t SET a = a + 1 WHERE id = 1") }  // kept
            #expect(throws: Undo.self) {
                try db.inSavepoint {
                    try db.execute("UPDATE t SET a = -1 WHERE id >= 3")  // moves pending rows 3-6 first
                    try db.execute("DELETE FROM t WHERE id = 2")
                    try db.inSavepoint { try db.execute("INSERT INTO t(id, a) VALUES (100, 1)") }
                    throw Undo()
                }
            }
            // Nested: the inner one undone, the outer one kept.
            try db.inSavepoint {
                try db.execute("UPDATE t SET c = 70 WHERE id = 6")
                try? db.inSavepoint { try db.execute("UPDATE t SET c = 0 WHERE id = 5"); throw Undo() }
            }
            return try db.fetchAll("SELECT id, a, c FROM t ORDER BY id").map(\.values)
        }
        try pair.oracle.execute("UPDATE t SET a = a + 1 WHERE id = 1")
        try pair.oracle.execute("UPDATE t SET c = 70 WHERE id = 6")
        #expect("\(kept)" == "\(try pair.oracle.fetchAll("SELECT id, a, c FROM t ORDER BY id").map(\.values))")
        try pair.sameTable()
        // The undone moves left nothing behind: rows 3-5 are still pending (row 6 moved for the
        // kept update), and the migration moves them once, and verifies.
        #expect(try pair.db.progress(countingRowsLeft: true).tables.first?.rowsLeft == 3)
        try pair.finish()
    }

    @Test(arguments: SchemaStatementTests.Placement.available)
    func aDropOfTheMigratingTableUndoneLeavesItMigrating(placement: SchemaStatementTests.Placement) throws {
        let pair = try Pair(placement: placement, rows: SchemaStatementTests.rows, stepFirst: true)
        let rows = try pair.db.write { db in
            #expect(throws: Undo.self) {
                try db.inSavepoint {
                    try db.execute("DROP TABLE t")
                    throw Undo()
                }
            }
            return try db.fetchAll("SELECT count(*) FROM t").map(\.values)
        }
        #expect("\(rows)" == "[[6]]")
        try pair.sameTable()
        try pair.finish()
    }

    @Test func notOnAReader() throws {
        let pair = try Pair(placement: .otherFile, rows: SchemaStatementTests.rows, stepFirst: false)
        #expect(throws: FerryError.self) { try pair.db.read { db in try db.inSavepoint { 1 } } }
    }
}
