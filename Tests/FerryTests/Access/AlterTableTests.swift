import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// `ALTER TABLE T ADD COLUMN` while `T` migrates: the pending rows read the new column's default
/// (never a source column of the same name), get it when they move, and the column survives a
/// reopen and the end of the migration. Every placement, before and after a step.
@Suite(.timeLimit(.minutes(2)))
struct AlterTableTests {
    typealias Pair = SchemaStatementTests.Pair

    @Test(arguments: SchemaStatementTests.Placement.available, [false, true])
    func anAddedColumnReadsItsDefaultOnEveryRow(placement: SchemaStatementTests.Placement, stepFirst: Bool) throws {
        let pair = try Pair(placement: placement, rows: SchemaStatementTests.rows, stepFirst: stepFirst)
        let everything = "SELECT id, a, b, c, d, e, g FROM t ORDER BY id"
        // Added and read in one transaction.
        try pair.oracle.execute("ALTER TABLE t ADD COLUMN d INTEGER DEFAULT 5")
        let inTransaction = try pair.db.write { db throws(FerryError) in
            try db.execute("ALTER TABLE t ADD COLUMN d INTEGER DEFAULT 5")
            return try db.fetchAll("SELECT id, d FROM t ORDER BY id").map(\.values)
        }
        #expect(inTransaction == (try pair.oracle.fetchAll("SELECT id, d FROM t ORDER BY id").map(\.values)))
        pair.same("ALTER TABLE t ADD COLUMN e TEXT")
        pair.same("ALTER TABLE t ADD COLUMN g INTEGER GENERATED ALWAYS AS (a * 2 + d) VIRTUAL")
        pair.same(everything)
        pair.same("SELECT * FROM t WHERE d = 5 ORDER BY id")
        pair.same("PRAGMA table_info(t)")
        for sql in ["UPDATE t SET d = d + id WHERE a > 25", "INSERT INTO t(a, b, d, e) VALUES (7, 'x', 9, 'new')",
                    "UPDATE t SET e = 'seen' WHERE id % 2 = 0 RETURNING id, d, e, g", "DELETE FROM t WHERE g > 100"] {
            pair.same(sql)
            pair.same(everything)
            try pair.db.step()
        }
        let reads = try pair.db.read { db throws(FerryError) in try db.fetchAll(everything).map(\.values) }
        #expect(reads == (try pair.oracle.fetchAll(everything).map(\.values)))
        try pair.db.migrateAllBlocking()
        pair.same(everything)
        #expect(try pair.db.verify().isConsistent)
    }

    /// The source has a column of the name the app adds (left behind on purpose at registration):
    /// the finished table holds the default in it, so the pending rows do too, also after a reopen.
    @Test func aSourceColumnOfTheSameNameNeverFeedsIt() throws {
        let box = Sandbox()
        let legacy = try Connection(path: box.path("legacy.db"))
        try legacy.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, extra TEXT)")
        try legacy.execute("INSERT INTO t VALUES (1, 10, 'secret 1'), (2, 20, 'secret 2'), (3, 30, 'secret 3')")
        legacy.close()
        try Connection(path: box.path("app.db")).execute("CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER)")
        let plan = MigrationPlan(sources: [MigrationSource(.file(box.path("legacy.db")), tables: [
            TableMapping(target: "t", source: "t", droppedColumns: ["extra"]),
        ])])
        var db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .fixedBatches(of: 1))
        try db.step()
        try db.write { db throws(FerryError) in try db.execute("ALTER TABLE t ADD COLUMN extra TEXT DEFAULT 'none'") }
        let query = "SELECT id, a, extra FROM t ORDER BY id"
        let expected: [[Value]] = [[1, 10, "none"], [2, 20, "none"], [3, 30, "none"]]
        #expect(try db.read { db throws(FerryError) in try db.fetchAll(query).map(\.values) } == expected)
        db.close()
        db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .fixedBatches(of: 1))
        defer { db.close() }
        #expect(try db.read { db throws(FerryError) in try db.fetchAll(query).map(\.values) } == expected)
        try db.migrateAllBlocking()
        #expect(try db.read { db throws(FerryError) in try db.fetchAll(query).map(\.values) } == expected)
        #expect(try db.verify().isConsistent)
    }

    @Test func aRolledBackColumnLeavesNoTrace() throws {
        let pair = try Pair(placement: .otherFile, rows: SchemaStatementTests.rows, stepFirst: false)
        struct Rollback: Error {}
        #expect(throws: Rollback.self) {
            try pair.db.write { db in
                try db.execute("ALTER TABLE t ADD COLUMN d DEFAULT 1")
                #expect(try db.fetchAll("SELECT d FROM t").count == 6)
                throw Rollback()
            }
        }
        pair.same("SELECT d FROM t")  // no such column, on both
        pair.same("SELECT * FROM t ORDER BY id")
        try pair.finish()
    }

    /// `DROP COLUMN`: the pending rows stop showing the column; a column SQLite refuses to drop
    /// (indexed) fails as on the finished table and leaves the redirect triggers working, also in
    /// the same transaction; the drop survives a reopen.
    @Test(arguments: SchemaStatementTests.Placement.available, [false, true])
    func aDroppedColumnLeavesEveryRow(placement: SchemaStatementTests.Placement, stepFirst: Bool) throws {
        let pair = try Pair(placement: placement, rows: SchemaStatementTests.rows, appSchema: ["CREATE UNIQUE INDEX t_b ON t(b)"],
                            stepFirst: stepFirst)
        pair.same("ALTER TABLE t DROP COLUMN c")
        pair.same("SELECT * FROM t ORDER BY id")
        pair.same("PRAGMA table_info(t)")
        #expect(pair.same("ALTER TABLE t DROP COLUMN b").hasPrefix("error"))  // indexed: refused by SQLite, on both
        // In one transaction: the failed drop, then an insert that conflicts with pending row 5 ('z').
        let script = ["INSERT INTO t(id, a, b) VALUES (80, 1, 'z')"]
        let committed: Bool? = try? pair.db.write { db throws(FerryError) in
            _ = try? db.execute("ALTER TABLE t DROP COLUMN b")
            for sql in script { try db.execute(sql) }
            return true
        }
        #expect(committed == nil)
        #expect(throws: (any Error).self) { try pair.oracle.execute(script[0]) }
        pair.same("INSERT OR REPLACE INTO t(id, a, b) VALUES (81, 2, 'w')")
        pair.same("UPDATE t SET a = a + 1 WHERE id > 2 RETURNING *")
        pair.same("SELECT * FROM t ORDER BY id")
        let reopened = try pair.reopen()
        defer { reopened.close() }
        let expected = try pair.oracle.fetchAll("SELECT * FROM t ORDER BY id").map(\.values)
        #expect(try reopened.read { db throws(FerryError) in try db.fetchAll("SELECT * FROM t ORDER BY id").map(\.values) } == expected)
        try reopened.migrateAllBlocking()
        #expect(try reopened.read { db throws(FerryError) in try db.fetchAll("SELECT * FROM t ORDER BY id").map(\.values) } == expected)
        #expect(try reopened.verify().isConsistent)
    }
}
