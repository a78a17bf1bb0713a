import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// A real column named `oid`, `rowid` or `_rowid_` shadows that spelling of the rowid, while the
/// table migrates as on the finished table: reads return the column's values, not the rowid.
@Suite(.timeLimit(.minutes(2))) struct RowidSpellingTests {
    typealias Placement = TestPlacement

    static let shapes = ["id INTEGER PRIMARY KEY, oid TEXT, b INTEGER", "id INTEGER PRIMARY KEY, rowid TEXT, b INTEGER",
                         "k INTEGER, _rowid_ TEXT, b INTEGER"]

    @Test(arguments: Placement.available, shapes)
    func aColumnNamedLikeTheRowidIsReadAsTheColumn(placement: Placement, declaration: String) throws {
        let box = Sandbox()
        let files = placement.files(in: box, table: "m", sameFileTable: "m_old")
        let cipher = files.cipher, sourceTable = files.sourceTable
        let rows = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 12) SELECT x * 10, 'v' || x, x % 3 FROM n"
        let source = try files.openSource()
        try source.execute("CREATE TABLE \(sourceTable)(\(declaration))")
        try source.execute("INSERT INTO \(sourceTable) \(rows)")
        source.close()
        let oracle = try Connection.inMemory()
        try oracle.execute("CREATE TABLE m(\(declaration))")
        try oracle.execute("INSERT INTO m \(rows)")
        let plan = files.plan(target: "m")
        let db = try FerryDatabase(path: box.path("app.db"), configuration: .init(cipher: cipher), plan: plan, options: .fixedBatches(of: 5))
        defer { db.close() }
        let column = ["oid", "rowid", "_rowid_"].first { declaration.contains(" \($0) TEXT") }!
        let queries = ["SELECT \(column) FROM m ORDER BY b, \(column)", "SELECT m.\(column), b FROM m WHERE \(column) = 'v3'",
                       "SELECT \(column), rowid AS r FROM m WHERE b = 2 ORDER BY r",
                       "SELECT count(*) FROM m WHERE \(column) LIKE 'v1%'", "SELECT max(\(column)) FROM m",
                       "SELECT \(column) FROM m WHERE b = 1 ORDER BY 1 DESC"]
        func same(_ sql: String, _ note: String) throws {
            let expected = try oracle.fetchAll(sql)
            let actual = try db.read { db throws(FerryError) in try db.query(sql) }
            #expect(actual.rows.map(\.values) == expected.map(\.values), "\(note): \(sql)")
            // Named as the finished table names them: the column's name, not the rowid's.
            if let names = expected.first?.columnNames { #expect(actual.columns == names, "\(note): \(sql)") }
        }
        for step in 0..<2 {
            for sql in queries { try same(sql, "step \(step)") }
            try db.step()
        }
        // A unique index two pending rows break fails as on the finished table (the rows it finds
        // duplicated are named by their rowid, not by the column); one they keep is created.
        for sql in ["CREATE UNIQUE INDEX m_pair ON m(b IS NOT NULL) WHERE \(column) IN ('v11', 'v12')", "CREATE UNIQUE INDEX m_col ON m(\(column))"] {
            let expected: String
            do { try oracle.execute(sql); expected = "created" } catch { expected = "\(FerryError(error).resultCode?.primary as Any)" }
            let actual: String
            do throws(FerryError) {
                try db.write { db throws(FerryError) in try db.execute(sql) }
                actual = "created"
            } catch {
                actual = "\(error.resultCode?.primary as Any)"
            }
            #expect(actual == expected, "\(sql)")
        }
        // A write through the column, then the same reads.
        let update = "UPDATE m SET b = b + 10 WHERE \(column) IN ('v2', 'v11')"
        try oracle.execute(update)
        try db.write { try $0.execute(update) }
        // A write whose condition reads the rowid under a spelling the column leaves free, in a
        // subquery of the table itself (SQLite 3.40 read NULL there: the union exposed `rowid` alone).
        let free = ["rowid", "oid", "_rowid_"].first { $0 != column }!
        let byRowid = "UPDATE m SET b = b + 100 WHERE \(free) IN (SELECT \(free) FROM m WHERE b = 1)"
        try oracle.execute(byRowid)
        let changed = try db.write { db throws(FerryError) in try db.execute(byRowid); return db.changes }
        #expect(changed == oracle.changes, "\(byRowid)")
        // A write whose condition reads the column through an alias of the table in a join: the
        // rows a write moves first are chosen by the column, not by the rowid.
        try oracle.execute("CREATE TABLE other(x INTEGER)")
        try db.write { try $0.execute("CREATE TABLE other(x INTEGER)") }
        for sql in ["INSERT INTO other VALUES (0), (2)", "DELETE FROM m WHERE \(column) IN (SELECT y.\(column) FROM other JOIN m AS y ON y.b = other.x) "
                        + "AND \(column) <> 'v3' RETURNING \(column), b"] {
            let expected = try oracle.fetchAll(sql).map(\.values)
            let actual = try db.write { db throws(FerryError) in try db.fetchAll(sql).map(\.values) }
            #expect(Set(actual.map { "\($0)" }) == Set(expected.map { "\($0)" }), "\(sql)")
        }
        for sql in queries + ["SELECT \(column), b FROM m ORDER BY b, \(column)"] { try same(sql, "after an update") }
        try db.migrateAllBlocking()
        for sql in queries { try same(sql, "finished") }
    }

    /// An unqualified rowid over a join resolves as SQLite resolves it on the finished tables: two
    /// tables with a rowid make it ambiguous (the union, which exposes the rowid as a column,
    /// would otherwise win), a table without one leaves it to the other, a qualified one is
    /// always read. In reads, in writes, before and after steps, on readers and the writer.
    @Test(arguments: Placement.available)
    func anUnqualifiedRowidOverAJoinResolvesAsOnTheFinishedTables(placement: Placement) throws {
        let box = Sandbox()
        let files = placement.files(in: box, table: "m", sameFileTable: "m_old")
        let cipher = files.cipher, sourceTable = files.sourceTable
        let rows = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 8) SELECT x, 'v' || x FROM n"
        let source = try files.openSource()
        try source.execute("CREATE TABLE \(sourceTable)(id INTEGER PRIMARY KEY, a TEXT)")
        try source.execute("INSERT INTO \(sourceTable) \(rows)")
        source.close()
        let others = ["CREATE TABLE other(x)", "INSERT INTO other VALUES (1), (2)",
                      "CREATE TABLE keyed(k PRIMARY KEY) WITHOUT ROWID", "INSERT INTO keyed VALUES (3)"]
        let oracle = try Connection.inMemory()
        try oracle.execute("CREATE TABLE m(id INTEGER PRIMARY KEY, a TEXT)")
        try oracle.execute("INSERT INTO m \(rows)")
        for sql in others { try oracle.execute(sql) }
        let plan = files.plan(target: "m")
        let db = try FerryDatabase(path: box.path("app.db"), configuration: .init(cipher: cipher), plan: plan, options: .fixedBatches(of: 3))
        defer { db.close() }
        try db.write { db throws(FerryError) in for sql in others { try db.execute(sql) } }
        func outcome(_ body: () throws -> [Row]) -> String {
            do { return "\(try body().map(\.values))" } catch {
                if case .sqlite(let code, let message, _)? = error as? SQLiteError { return "error \(code.primary): \(message)" }
                if case .sqlite(let code, let message, _)? = error as? FerryError { return "error \(code.primary): \(message)" }
                return "error \(error)"
            }
        }
        let reads = ["SELECT rowid FROM other, m", "SELECT oid FROM m JOIN other ON 1", "SELECT _rowid_, a FROM other AS o, m WHERE a = 'v2'",
                     "SELECT m.rowid, other.rowid FROM other, m ORDER BY 1, 2", "SELECT rowid, k FROM keyed, m ORDER BY 1",
                     "SELECT a FROM m WHERE rowid IN (SELECT rowid FROM other) ORDER BY 1", "SELECT count(*) FROM other JOIN m USING (rowid)"]
        let writes = ["UPDATE m SET a = 'z' FROM other WHERE rowid = 1", "UPDATE m SET a = 'y' FROM keyed WHERE rowid = k RETURNING id",
                      "DELETE FROM m WHERE rowid IN (SELECT rowid FROM other, keyed) RETURNING id"]
        for round in 0..<3 {
            for sql in reads {
                let expected = outcome { try oracle.fetchAll(sql) }
                #expect(outcome { try db.read { db throws(FerryError) in try db.fetchAll(sql) } } == expected, "round \(round), reader: \(sql)")
                #expect(outcome { try db.write { db throws(FerryError) in try db.fetchAll(sql) } } == expected, "round \(round), writer: \(sql)")
            }
            if round == 1 {
                for sql in writes {
                    #expect(outcome { try db.write { db throws(FerryError) in try db.fetchAll(sql) } } == outcome { try oracle.fetchAll(sql) }, "\(sql)")
                }
            }
            try db.step()
        }
        try db.migrateAllBlocking()
        let sql = "SELECT id, a FROM m ORDER BY id"
        #expect(outcome { try db.read { db throws(FerryError) in try db.fetchAll(sql) } } == outcome { try oracle.fetchAll(sql) })
    }
}
