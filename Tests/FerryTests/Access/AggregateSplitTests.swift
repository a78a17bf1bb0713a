import FerrySQLite
import FerryTestSupport
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// A whole-table aggregate over a migrating table runs per arm (the target's rows, the pending
/// rows) and combines the arms' results (`AggregateSplit`); the answers are the finished table's,
/// NULLs, empty arms, collations, parameters and errors included.
@Suite(.timeLimit(.minutes(2))) struct AggregateSplitTests {
    /// Rows with NULLs, negative and large values, and text that orders differently under BINARY
    /// and NOCASE (no two values tie under either: which of two tied values `min` returns depends
    /// on the order rows are read in, a documented difference).
    static let rows: [(Int, Int, String?, Int)] = [
        (1, 10, "b", 1), (2, -20, nil, 2), (3, 30, "C", 3), (4, 40, nil, 4), (5, -50, "a", 5), (6, 60, "D", 6),
        (7, 70, "e", 7), (8, 4_611_686_018_427_387_904, "F", 8),
    ]

    /// Aggregate queries the split serves, each compared with the finished table (inside a write
    /// transaction, as `Pair.same` runs them).
    static let splitQueries = [
        "SELECT count(*) FROM t",
        "SELECT count(*), count(b), count() FROM t WHERE c > 2",
        "SELECT sum(a), total(a), avg(a), min(a), max(a) FROM t",
        "SELECT min(b), max(b), min(b COLLATE NOCASE), max(b COLLATE NOCASE), max(CAST(b AS TEXT)) FROM t",
        "SELECT sum(a) FROM t WHERE id > 100",  // both arms empty: NULL
        "SELECT sum(c) FILTER (WHERE b IS NULL), count(*) FILTER (WHERE a < 0), max(b) FILTER (WHERE id > 4) FROM t",
        "SELECT coalesce(max(a), 0) + count(*) * 2 AS score, count(*) > 3, max(a) - min(a) FROM t",
        "SELECT count(*) AS n FROM t AS x WHERE x.a > 0 AND x.b IS NOT NULL",
        "SELECT avg(a) FROM t WHERE a IS NULL",  // no row counts: NULL
        "SELECT max(id), min(rowid), sum(oid) FROM t",
        "SELECT count(*) FROM t LIMIT 0",
        "SELECT sum(a) + 0, typeof(sum(a)), typeof(avg(c)), typeof(total(c)) FROM t WHERE id IN (1, 5)",
    ]

    /// Each query the split serves answers as the finished table, on every placement, before and
    /// after a step, and after the app wrote to both halves.
    @Test(arguments: SchemaStatementTests.Placement.available, [false, true])
    func aggregatesAnswerAsTheFinishedTable(placement: SchemaStatementTests.Placement, stepFirst: Bool) throws {
        let pair = try SchemaStatementTests.Pair(placement: placement, rows: Self.rows, stepFirst: stepFirst)
        for sql in Self.splitQueries {
            #expect(try Self.isSplit(sql, on: pair.db), "\(sql)")
            pair.same(sql)
        }
        pair.same("UPDATE t SET a = a + 1 WHERE id IN (1, 8)")  // one row per half after a step
        pair.same("DELETE FROM t WHERE id = 7")
        pair.same("INSERT INTO t(id, a, b) VALUES (9, NULL, 'b')")
        for sql in Self.splitQueries { pair.same(sql) }
        try pair.finish()
        for sql in Self.splitQueries { pair.same(sql) }
    }

    /// The read path (a reader's snapshot) and parameters: anonymous `?` are numbered, so each arm
    /// binds the same values.
    @Test func readsBindTheSameParametersInEachArm() throws {
        let pair = try SchemaStatementTests.Pair(placement: .otherFile, rows: Self.rows, stepFirst: true)
        let sql = "SELECT count(*) + ?, sum(a) FILTER (WHERE c > ?) FROM t WHERE a > ? AND id < ?3 + 1000"
        #expect(try Self.isSplit(sql, on: pair.db))
        let arguments: StatementArguments = [.integer(100), .integer(2), .integer(0)]
        let ferry = try pair.db.read { db throws(FerryError) in try db.fetchAll(sql, arguments).map(\.values) }
        #expect(ferry == (try pair.oracle.fetchAll(sql, arguments).map(\.values)))
    }

    /// `sum` fails with "integer overflow" where SQLite's would, even when each arm's sum fits.
    @Test func anIntegerOverflowFailsAsOnTheFinishedTable() throws {
        let big = 9_000_000_000_000_000_000
        let pair = try SchemaStatementTests.Pair(placement: .otherFile, rows: [(1, big, "a", 1), (2, 5, "b", 2), (3, big, "c", 3), (4, -big, "d", 4)],
                                                 stepFirst: true)  // rows 1 and 2 moved: each arm's sum fits, theirs does not
        #expect(try pair.db.progress().rowsMoved == 2)
        #expect(pair.same("SELECT sum(a) FROM t WHERE id <= 3").contains("integer overflow"))
        #expect(pair.same("SELECT sum(-a) - 1 FROM t WHERE id IN (1, 3)").contains("integer overflow"))
        // (`sum(a)` over all four overflows on the finished table part-way, at row 3, and fits per
        // arm: whether a running sum overflows depends on the order rows are read in, which SQLite
        // leaves undefined, as Limitations says.)
        pair.same("SELECT total(a), avg(a) FROM t")
    }

    /// A target column that compares under another collation than the source's (`NOCASE` over a
    /// BINARY source column): the pending rows' arm compares under the target's, as the finished
    /// table does, in `WHERE`, `min` and `max`.
    @Test func thePendingArmComparesUnderTheTargetsCollation() throws {
        let box = Sandbox()
        let legacyPath = box.path("legacy.db")
        let legacy = try Connection(path: legacyPath)
        try legacy.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, b TEXT)")
        let oracle = try Connection(path: box.path("oracle.db"))
        try oracle.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, b TEXT COLLATE NOCASE)")
        for (id, b) in [(1, "b"), (2, "a"), (3, "Z"), (4, "y"), (5, "C"), (6, "d")] {
            try legacy.execute("INSERT INTO t VALUES (?, ?)", [.integer(Int64(id)), .text(b)])
            try oracle.execute("INSERT INTO t VALUES (?, ?)", [.integer(Int64(id)), .text(b)])
        }
        legacy.close()
        let target = try Connection(path: box.path("app.db"))
        try target.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, b TEXT COLLATE NOCASE)")
        target.close()
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacyPath), tables: [TableMapping(target: "t", source: "t")])])
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .fixedBatches(of: 2))
        try db.step()
        for sql in ["SELECT count(*) FROM t WHERE b = 'c'", "SELECT min(b), max(b) FROM t", "SELECT count(*) FROM t WHERE b > 'b'",
                    "SELECT max(b COLLATE BINARY), min(b COLLATE BINARY) FROM t"] {
            #expect(try Self.isSplit(sql, on: db), "\(sql)")
            let ferry = try db.read { db throws(FerryError) in try db.fetchAll(sql).map(\.values) }
            #expect(ferry == (try oracle.fetchAll(sql).map(\.values)), "\(sql)")
        }
    }

    /// Queries whose answer the split could change read the union, as before, and still answer
    /// as the finished table.
    @Test func otherShapesReadTheUnion() throws {
        let pair = try SchemaStatementTests.Pair(placement: .otherFile, rows: Self.rows, stepFirst: true)
        for sql in ["SELECT count(DISTINCT b) FROM t", "SELECT b, count(*) FROM t GROUP BY b ORDER BY b", "SELECT max(a), b FROM t",
                    "SELECT group_concat(b) FROM (SELECT b FROM t ORDER BY id)", "SELECT count(*) FROM t HAVING count(*) > 1",
                    "SELECT count(*) FROM t WHERE a > (SELECT min(a) FROM t)", "SELECT DISTINCT count(*) FROM t",
                    "SELECT count(*) FROM t ORDER BY 1", "SELECT count(*) FROM t, t AS u", "SELECT count(*) OVER () FROM t",
                    "SELECT a FROM t WHERE id = 1", "SELECT max(b || 'x' COLLATE NOCASE) FROM t"] {
            #expect(try !Self.isSplit(sql, on: pair.db), "\(sql)")
            pair.same(sql)
        }
        // A named parameter: its index depends on where it first appears, which the split changes.
        #expect(try !Self.isSplit("SELECT count(*) FROM t WHERE a > :x", on: pair.db))
    }

    /// True when Ferry computes `sql` arm by arm.
    static func isSplit(_ sql: String, on db: FerryDatabase) throws -> Bool {
        try db.read { db throws(FerryError) in try db.redirectedStatements(sql).statement.contains("ferry_arm_1") }
    }
}
