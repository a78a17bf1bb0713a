import FerryTestSupport
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// `FerryConnection.changes` follows the app's last INSERT, UPDATE or DELETE whatever its text
/// starts with (the statement's kind comes from SQLite, not from its first word).
@Suite(.timeLimit(.minutes(2))) struct ChangesCounterTests {
    @Test func changesFollowStatementsThatStartWithACommentOrACTE() throws {
        let box = Sandbox()
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: try box.makeLegacy(rows: 20)), options: .fixedBatches(of: 5))
        _ = try db.step()
        try db.write { db in
            try db.execute("UPDATE messages SET body = 'a' WHERE id <= 3")
            #expect(db.changes == 3)
            try db.execute("/* why */ UPDATE messages SET body = 'b' WHERE id <= ?", [.integer(7)])
            #expect(db.changes == 7)
            try db.execute("-- note\n DELETE FROM messages WHERE id > ?", [.integer(18)])
            #expect(db.changes == 2)
            try db.execute("WITH k(v) AS (SELECT 9) UPDATE messages SET body = 'c' WHERE id IN (SELECT v FROM k)")
            #expect(db.changes == 1)
            // Statements that change no row leave the count as it was.
            _ = try db.fetchAll("/* read */ SELECT count(*) FROM messages")
            try db.execute("CREATE TABLE other(x)")
            #expect(db.changes == 1)
        }
    }

    /// A statement cached before a schema change that SQLite cannot compile again fails as if its
    /// prepare had failed: it never ran, so `changes` stays what the last statement left (found by
    /// the differential harness: a DELETE naming a column renamed since).
    @Test(arguments: SchemaStatementTests.Placement.available)
    func aStatementThatNoLongerCompilesLeavesChangesAlone(placement: SchemaStatementTests.Placement) throws {
        let pair = try SchemaStatementTests.Pair(placement: placement, rows: SchemaStatementTests.rows, stepFirst: false)
        let delete = "DELETE FROM t WHERE a % 20 = 0"
        for sql in [delete, "ALTER TABLE t RENAME COLUMN a TO a2", delete, "DROP TABLE IF EXISTS nothing",
                    "DELETE FROM t WHERE a2 % 20 = 0", "ALTER TABLE t RENAME TO u", "DELETE FROM t WHERE a2 % 20 = 0", "DROP INDEX IF EXISTS nothing"] {
            let finishedFailed = (try? pair.oracle.execute(sql)) == nil
            let ferryFailed = (try? pair.db.write { db throws(FerryError) in try db.execute(sql) }) == nil
            #expect(ferryFailed == finishedFailed, "\(sql)")
            let changes = try pair.db.write { db throws(FerryError) in db.changes }
            #expect(changes == pair.oracle.changes, "after \(sql)")
        }
    }

    /// SQL's `changes()` reports the app's last INSERT, UPDATE or DELETE, as on the finished table,
    /// across what Ferry runs in between: a step, the lock that begins a write transaction, the
    /// moves ahead of a write (whose statement reads `changes()` while it runs). Each placement.
    @Test(arguments: SchemaStatementTests.Placement.available)
    func sqlChangesIgnoresFerrysOwnStatements(placement: SchemaStatementTests.Placement) throws {
        let pair = try SchemaStatementTests.Pair(placement: placement, rows: SchemaStatementTests.rows, stepFirst: false)
        let same = { (sql: String) in
            let outcome = pair.same(sql)
            #expect(!outcome.hasPrefix("error"), "\(sql)")
        }
        same("UPDATE t SET c = c + 1 WHERE id <= 3")
        same("SELECT changes()")
        _ = try pair.db.step()  // the step's own writes
        same("SELECT changes()")
        same("DELETE FROM t WHERE id = 1")
        // Pending rows move ahead of this update (a DML of Ferry's): changes() is still the delete's.
        same("UPDATE t SET c = changes() + 100 WHERE id >= 4 RETURNING id, c")
        same("SELECT changes()")
        same("DELETE FROM t WHERE a < 0")  // no row: 0
        same("SELECT changes()")
        try pair.sameTable()
    }
}
