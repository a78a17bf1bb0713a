import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// `*` beside the rowid on a migrating table: the union exposes the rowid as a column, and the
/// rewriter spells `*` out as the finished table's columns, so results (and column names) are
/// those of the finished table. Every placement, before and after a step.
@Suite(.timeLimit(.minutes(2)))
struct StarExpansionTests {
    typealias Pair = SchemaStatementTests.Pair

    static let rows: [(Int, Int, String?, Int)] = (1...8).map { ($0, $0 * 10, $0 % 3 == 0 ? nil : "b\($0)", $0 % 4) }

    @Test(arguments: SchemaStatementTests.Placement.available, [false, true])
    func starBesideTheRowidShowsTheFinishedTablesColumns(placement: SchemaStatementTests.Placement, stepFirst: Bool) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, stepFirst: stepFirst)
        try pair.oracle.execute("CREATE TABLE u(k INTEGER PRIMARY KEY, note TEXT); INSERT INTO u VALUES (2, 'two'), (5, 'five')")
        try pair.db.write { db throws(FerryError) in try db.execute("CREATE TABLE u(k INTEGER PRIMARY KEY, note TEXT); INSERT INTO u VALUES (2, 'two'), (5, 'five')") }
        for sql in [
            "SELECT rowid, * FROM t ORDER BY rowid",
            "SELECT *, oid FROM t WHERE c > 1 ORDER BY 1",
            "SELECT t.*, _rowid_ FROM t ORDER BY 5",
            "SELECT x.rowid, x.*, u.* FROM t AS x JOIN u ON u.k = x.id ORDER BY 1",
            "SELECT *, x.rowid FROM t AS x, u WHERE u.k = x.id ORDER BY 1",
            "SELECT * FROM (SELECT rowid AS r, * FROM t) WHERE r > 3 ORDER BY r",
            "SELECT rowid, * FROM t WHERE (a, b, c) IN (SELECT a, b, c FROM t WHERE rowid > 2) ORDER BY 1",
            "SELECT rowid, * FROM t UNION ALL SELECT k, k, note, NULL, NULL FROM u ORDER BY 1, 2",
        ] {
            pair.same(sql)
        }
        for sql in ["UPDATE t SET c = c + 1 WHERE a > 40 RETURNING rowid, *",
                    "DELETE FROM t WHERE rowid IN (SELECT rowid FROM t WHERE c = 0) RETURNING *, rowid",
                    "INSERT INTO t SELECT rowid + 100, * FROM (SELECT a, b, c FROM t WHERE rowid < 3)",
                    "INSERT INTO t(a, b, c) SELECT a, b, c FROM (SELECT rowid, * FROM t WHERE a < 30)"] {
            pair.same(sql)
            try pair.sameTable()
        }
        try pair.finish()
    }

    @Test func aStarThatCannotBeSpelledOutIsRefused() throws {
        let pair = try Pair(placement: .otherFile, rows: Self.rows, stepFirst: false)
        // NATURAL and USING show a shared column once; the rewriter refuses rather than guess.
        for sql in ["SELECT rowid, * FROM t NATURAL JOIN t AS y", "SELECT t.rowid, * FROM t JOIN t AS y USING (id)"] {
            #expect(throws: FerryError.self, "\(sql)") { try pair.db.read { db throws(FerryError) in _ = try db.fetchAll(sql) } }
        }
        // Without the rowid the union shows the table's columns: those work as written.
        pair.same("SELECT * FROM t NATURAL JOIN t AS y ORDER BY 1")
    }
}
