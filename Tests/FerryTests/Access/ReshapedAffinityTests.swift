import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// A target whose columns have other types than the source's (`a INTEGER` fed by `a TEXT`, ...):
/// the pending rows read, compare, sort, group and are picked by writes with the target column's
/// affinity, as the finished table stores them (`ferry_affinity`), before and after steps, on
/// readers and the writer, on every placement.
@Suite(.timeLimit(.minutes(2))) struct ReshapedAffinityTests {
    typealias Placement = TestPlacement

    static let source = "id INTEGER PRIMARY KEY, a TEXT, b TEXT, c INTEGER, d INTEGER, e BLOB"
    static let target = "id INTEGER PRIMARY KEY, a INTEGER, b NUMERIC, c REAL, d TEXT, e BLOB, f INTEGER DEFAULT '42'"
    static let rows = """
        VALUES (1, '10', '1e3', 1, 1, x'00'), (2, '2', '3.5', 2, 2.5, NULL), (3, 'x', 'abc', 3, 'q', NULL),
               (4, '1.0', '7', 4, 3, NULL), (5, ' 5 ', '0x10', 5, 5, NULL), (6, NULL, '12.0', 6, 6, NULL),
               (7, '922337203685477580', '-0', 7, 1e300, NULL), (8, '1e400', '00012', 8, -0.0, NULL)
        """
    static let reads = [
        "SELECT id, a, typeof(a), b, typeof(b), c, typeof(c), d, typeof(d), f, typeof(f) FROM t ORDER BY id",
        "SELECT id FROM t WHERE a = 10 OR b = 1000 OR c = 3 OR d = '2.5' OR f = 42 ORDER BY id",
        "SELECT id FROM t WHERE a > 5 ORDER BY id", "SELECT id, a FROM t ORDER BY a, id", "SELECT typeof(b), count(*) FROM t GROUP BY 1 ORDER BY 1",
        "SELECT DISTINCT d FROM t ORDER BY 1", "SELECT sum(a), max(b), min(d), total(c) FROM t", "SELECT a FROM t UNION SELECT 10 ORDER BY 1",
        "SELECT count(*) FROM t WHERE b IN (7, 12, 3.5)",
        // Operands of another type than the column's: converted as the finished column converts them.
        "SELECT id FROM t WHERE a = '10' OR b = '1e3' OR c = '3' OR f = '42' ORDER BY id",
        "SELECT id FROM t WHERE '2' = a OR '7.0' == t.b ORDER BY id", "SELECT id FROM t WHERE a > '5' AND a <= '10' ORDER BY id",
        "SELECT id FROM t WHERE a IN ('10', '2', 'x') ORDER BY id", "SELECT id FROM t WHERE a NOT IN ('10', '2') ORDER BY id",
        "SELECT id FROM t WHERE b BETWEEN '6' AND '12' ORDER BY id", "SELECT id FROM t WHERE a IS '10' OR a IS NOT '2' ORDER BY id",
        "SELECT id FROM t WHERE d = 2.5 OR d = 3 OR d < 2 ORDER BY id", "SELECT id FROM t WHERE d COLLATE NOCASE = 6 ORDER BY id",
        "SELECT a = '10', a > '5' AS big, d = 3 FROM t ORDER BY id",
        "SELECT t.id FROM t JOIN (SELECT '10' AS k UNION ALL SELECT '7') AS u ON t.a = u.k OR t.b = u.k ORDER BY 1",
        "SELECT id FROM t WHERE a = (SELECT '2') OR c = CAST('4' AS TEXT) ORDER BY id",
        "SELECT id FROM t WHERE a + 0 = '10' OR a = '1' || '0' ORDER BY id",
        "SELECT (SELECT count(*) FROM t AS x WHERE x.a = '10'), (SELECT count(*) FROM t WHERE d = 5)",
    ]
    static let writes = ["UPDATE t SET e = 1 WHERE a = 10 RETURNING id", "DELETE FROM t WHERE b = 7 RETURNING id",
                         "UPDATE t SET f = f + 1 WHERE d = '6' RETURNING id, f", "UPDATE t SET e = 2 WHERE a = '2' OR d = 5 RETURNING id",
                         "DELETE FROM t WHERE b IN ('1e3', '12') RETURNING id"]

    /// The source table with `rows` and the reshaped target, migrating on `placement` (3 rows a step).
    static func migrating(placement: Placement, in box: Sandbox) throws -> FerryDatabase {
        let files = placement.files(in: box, table: "t", sameFileTable: "t_old")
        let cipher = files.cipher, app = files.appPath, sourceTable = files.sourceTable
        let legacy = try files.openSource()
        try legacy.execute("CREATE TABLE \(sourceTable)(\(Self.source)); INSERT INTO \(sourceTable) \(Self.rows)")
        if placement != .sameFile { legacy.close() }
        let targetFile = placement == .sameFile ? legacy : try files.openApp()
        try targetFile.execute("CREATE TABLE t(\(Self.target))")
        targetFile.close()
        return try FerryDatabase(path: app, configuration: .init(cipher: cipher), plan: files.plan(target: "t"), options: .fixedBatches(of: 3))
    }

    @Test(arguments: Placement.available)
    func pendingRowsHaveTheTargetsAffinity(placement: Placement) throws {
        let box = Sandbox()
        let db = try Self.migrating(placement: placement, in: box)
        defer { db.close() }
        let oracle = try Connection.inMemory()
        // The finished table: the source's rows (as the source's types stored them) copied in.
        try oracle.execute("CREATE TEMP TABLE s(\(Self.source)); INSERT INTO s \(Self.rows)")
        try oracle.execute("CREATE TABLE t(\(Self.target)); INSERT INTO t(id, a, b, c, d, e) SELECT * FROM s")
        func same(_ sql: String, _ note: String) throws {
            let expected = "\(try oracle.fetchAll(sql).map(\.values))"
            let onReader = try db.read { db throws(FerryError) in "\(try db.fetchAll(sql).map(\.values))" }
            let onWriter = try db.write { db throws(FerryError) in "\(try db.fetchAll(sql).map(\.values))" }
            #expect(onReader == expected, "\(note), reader: \(sql)")
            #expect(onWriter == expected, "\(note), writer: \(sql)")
        }
        for round in 0..<3 {
            for sql in Self.reads { try same(sql, "round \(round)") }
            if round == 1 {
                for sql in Self.writes {
                    let expected = "\(try oracle.fetchAll(sql).map(\.values))"
                    #expect(try db.write { db throws(FerryError) in "\(try db.fetchAll(sql).map(\.values))" } == expected, "\(sql)")
                }
            }
            try db.step()
        }
        try db.migrateAllBlocking()
        for sql in Self.reads { try same(sql, "finished") }
    }

    /// A parameter bound to text is converted like a literal, and a result column keeps the name
    /// SQLite gives the expression as written.
    @Test(arguments: Placement.available)
    func parametersAndResultColumnNames(placement: Placement) throws {
        let box = Sandbox()
        let db = try Self.migrating(placement: placement, in: box)
        defer { db.close() }
        try db.step()
        let ids = try db.read { db throws(FerryError) in
            try db.fetchAll("SELECT id FROM t WHERE a = ? OR a = ?2 OR d = ?3 ORDER BY id", [.text("10"), .text("2"), .integer(5)]).map(\.values)
        }
        #expect(ids == [[.integer(1)], [.integer(2)], [.integer(5)]])
        let names = try db.read { db throws(FerryError) in try db.fetchAll("SELECT a = '10', a>'5', d IN (1, 2) FROM t LIMIT 1").first?.columnNames }
        #expect(names == ["a = '10'", "a>'5'", "d IN (1, 2)"])
        // A view is stored as the app wrote it, and converts when it is read.
        let view = "CREATE VIEW ten AS SELECT id FROM t WHERE a = '10' OR d = 5"
        try db.write { db throws(FerryError) in try db.execute(view) }
        let stored = try db.read { db throws(FerryError) in try db.fetchOne("SELECT sql FROM sqlite_master WHERE name = 'ten'")?.values }
        #expect(stored == [.text(view)])
        #expect(try db.read { db throws(FerryError) in try db.fetchAll("SELECT id FROM ten ORDER BY id").map(\.values) } == [[.integer(1)], [.integer(5)]])
    }

    /// The function applies SQLite's own rules: each value, through `ferry_affinity`, equals the
    /// value a column of that type stores and reads.
    @Test func theFunctionMatchesWhatAColumnStores() throws {
        let db = try Connection.inMemory()
        let types = ["INTEGER", "TEXT", "BLOB", "REAL", "NUMERIC"]
        try db.execute("CREATE TABLE k(" + types.map { "c_\($0) \($0)" }.joined(separator: ", ") + ")")
        let values = ["'10'", "' 5 '", "'1.0'", "'1e3'", "'0x10'", "'abc'", "'-0'", "'9223372036854775807'", "'9223372036854775808'",
                      "'1e400'", "1", "2.5", "3.0", "-0.0", "1e300", "9223372036854775807", "x'01'", "NULL", "''", "'  '", "'1_000'"]
        for value in values {
            try db.execute("DELETE FROM k; INSERT INTO k VALUES (" + types.map { _ in value }.joined(separator: ", ") + ")")
            for type in types {
                let stored = try db.fetchAll("SELECT c_\(type), typeof(c_\(type)) FROM k").map(\.values)
                let applied = try db.fetchAll("SELECT ferry_affinity(\(value), '\(type)') AS v, typeof(ferry_affinity(\(value), '\(type)'))").map(\.values)
                #expect("\(applied)" == "\(stored)", "\(value) as \(type)")
            }
        }
    }
}
