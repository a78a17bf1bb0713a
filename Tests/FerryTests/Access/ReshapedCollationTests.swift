import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// A target whose column compares under another collation than the source's (`b TEXT COLLATE
/// NOCASE` fed by a BINARY column): a write picks the pending rows it moves ahead under the target's
/// collation, so it touches the rows the finished table's statement touches.
@Suite(.timeLimit(.minutes(2))) struct ReshapedCollationTests {
    typealias Pair = SchemaStatementTests.Pair
    typealias Placement = SchemaStatementTests.Placement

    static let rows: [(Int, Int, String?, Int)] = [(1, 10, "x", 1), (2, 20, "X", 2), (3, 30, "y", 3), (4, 40, "Y", 4), (5, 50, "z", 5), (6, 60, "Z", 6)]

    static let writes = ["DELETE FROM t WHERE b = 'x'", "UPDATE t SET c = 0 WHERE b = 'y'", "UPDATE t SET c = c + 100 WHERE b > 'X'",
                         "DELETE FROM t WHERE b IN ('z')", "UPDATE t SET a = -a WHERE b BETWEEN 'X' AND 'y'"]

    @Test(arguments: Placement.available, [false, true])
    func writesTouchTheRowsTheFinishedTableWouldTouch(placement: Placement, stepFirst: Bool) throws {
        for write in Self.writes {
            let pair = try Pair(placement: placement, rows: Self.rows, targetBCollation: "COLLATE NOCASE", stepFirst: stepFirst)
            pair.same(write + " RETURNING id, c")
            try pair.sameTable()
            pair.same("SELECT changes()")
            try pair.finish()
        }
    }

    /// Reads compare, deduplicate, group and sort under the target's collation too: on readers and
    /// the writer, before and after a step.
    @Test(arguments: Placement.available, [false, true])
    func readsCompareUnderTheFinishedTablesCollation(placement: Placement, stepFirst: Bool) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, targetBCollation: "COLLATE NOCASE", stepFirst: stepFirst)
        for read in ["SELECT id FROM t WHERE b = 'x' ORDER BY id", "SELECT count(*) FROM t WHERE b > 'X'", "SELECT id FROM t WHERE b IN ('y', 'z') ORDER BY id",
                     "SELECT b FROM t UNION SELECT upper(b) FROM t ORDER BY 1", "SELECT count(DISTINCT b) FROM t",
                     "SELECT lower(b), count(*) FROM t GROUP BY b ORDER BY 1", "SELECT DISTINCT lower(b) FROM t ORDER BY 1",
                     "SELECT x.id, y.id FROM t AS x JOIN t AS y ON x.b = y.b AND x.id < y.id ORDER BY 1, 2",
                     "SELECT id FROM t WHERE b = 'Z' OR b BETWEEN 'x' AND 'X' ORDER BY id", "SELECT min(b) = 'x', max(b) = 'z' FROM t"] {
            pair.same(read)
            let onReader = try pair.db.read { db throws(FerryError) in "\(try db.fetchAll(read).map(\.values))" }
            #expect(onReader == "\(try pair.oracle.fetchAll(read).map(\.values))", "reader: \(read)")
        }
        try pair.finish()
    }

    /// Inside a transaction, after a step, twice in a row.
    @Test func writesInOneTransaction() throws {
        let pair = try Pair(placement: .otherFile, rows: Self.rows, targetBCollation: "COLLATE NOCASE", stepFirst: true)
        try pair.runInOneTransaction(["UPDATE t SET c = 9 WHERE b = 'z'", "DELETE FROM t WHERE b = 'X'"])
        try pair.sameTable()
        try pair.finish()
    }

    /// The same with a generated column in the target (its pending rows are computed in nested
    /// queries, under the target's collations too).
    @Test(arguments: Placement.available)
    func withAGeneratedColumnToo(placement: Placement) throws {
        let box = Sandbox()
        let files = placement.files(in: box, table: "t", sameFileTable: "t_old")
        let cipher = files.cipher, app = files.appPath, sourceTable = files.sourceTable
        let rows = "VALUES (1, 1, 't1', 1), (2, 2, 't2', 2), (3, 3, 'T3', 3), (4, 4, 'x', 4)"
        let legacy = try files.openSource()
        try legacy.execute("CREATE TABLE \(sourceTable)(id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c INTEGER); INSERT INTO \(sourceTable) \(rows)")
        let target = "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT COLLATE NOCASE, c INTEGER, g INTEGER GENERATED ALWAYS AS (a * 2 + c) VIRTUAL)"
        if placement == .sameFile { try legacy.execute(target) } else { try files.openApp().execute(target) }
        legacy.close()
        let oracle = try Connection.inMemory()
        try oracle.execute(target + "; INSERT INTO t(id, a, b, c) \(rows)")
        let db = try FerryDatabase(path: app, configuration: .init(cipher: cipher), plan: files.plan(target: "t"), options: .fixedBatches(of: 1))
        defer { db.close() }
        try db.step()  // row 1 moved
        for sql in ["DELETE FROM t WHERE b = 'T2' RETURNING id, g", "UPDATE t SET c = 10 WHERE b = 't3' RETURNING id, g", "SELECT id, g FROM t WHERE b > 'T' ORDER BY id"] {
            let expected = "\(try oracle.fetchAll(sql).map(\.values))"
            let actual = try db.write { db throws(FerryError) in "\(try db.fetchAll(sql).map(\.values))" }
            #expect(actual == expected, "\(sql)")
        }
        try db.migrateAllBlocking()
        let all = "SELECT id, a, b, c, g FROM t ORDER BY id"
        #expect(try db.read { db throws(FerryError) in "\(try db.fetchAll(all).map(\.values))" } == "\(try oracle.fetchAll(all).map(\.values))")
    }
}
