import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// A real column named `oid`, `rowid` or `_rowid_` shadows that spelling of the rowid, while the
/// table migrates as on the finished table: reads return the column's values, not the rowid.
@Suite(.timeLimit(.minutes(2))) struct RowidSpellingTests {
    enum Placement: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case otherFile, encrypted, sameFile
        var testDescription: String { rawValue }
        static var available: [Placement] { SQLiteEngine.supportsEncryption ? allCases : [.otherFile, .sameFile] }
    }

    static let shapes = ["id INTEGER PRIMARY KEY, oid TEXT, b INTEGER", "id INTEGER PRIMARY KEY, rowid TEXT, b INTEGER",
                         "k INTEGER, _rowid_ TEXT, b INTEGER"]

    @Test(arguments: Placement.available, shapes)
    func aColumnNamedLikeTheRowidIsReadAsTheColumn(placement: Placement, declaration: String) throws {
        let box = Sandbox()
        let cipher: Cipher? = placement == .encrypted ? .passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
        let rows = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 12) SELECT x * 10, 'v' || x, x % 3 FROM n"
        let sourcePath = placement == .sameFile ? box.path("app.db") : box.path("legacy.db")
        let sourceTable = placement == .sameFile ? "m_old" : "m"
        let source = try Connection(path: sourcePath, configuration: .init(cipher: cipher))
        try source.execute("CREATE TABLE \(sourceTable)(\(declaration))")
        try source.execute("INSERT INTO \(sourceTable) \(rows)")
        source.close()
        let oracle = try Connection.inMemory()
        try oracle.execute("CREATE TABLE m(\(declaration))")
        try oracle.execute("INSERT INTO m \(rows)")
        let mapping = TableMapping(target: "m", source: sourceTable)
        let plan = MigrationPlan(sources: [placement == .sameFile ? MigrationSource(.targetFile, tables: [mapping])
            : MigrationSource(.file(sourcePath), cipher: cipher, tables: [mapping])])
        let db = try FerryDatabase(path: box.path("app.db"), configuration: .init(cipher: cipher), plan: plan, options: .fixedBatches(of: 5))
        defer { db.close() }
        let column = ["oid", "rowid", "_rowid_"].first { declaration.contains(" \($0) TEXT") }!
        let queries = ["SELECT \(column) FROM m ORDER BY b, \(column)", "SELECT m.\(column), b FROM m WHERE \(column) = 'v3'",
                       "SELECT count(*) FROM m WHERE \(column) LIKE 'v1%'", "SELECT max(\(column)) FROM m",
                       "SELECT \(column) FROM m WHERE b = 1 ORDER BY 1 DESC"]
        func same(_ sql: String, _ note: String) throws {
            let expected = try oracle.fetchAll(sql).map(\.values)
            let actual = try db.read { db throws(FerryError) in try db.fetchAll(sql).map(\.values) }
            #expect(actual == expected, "\(note): \(sql)")
        }
        for step in 0..<2 {
            for sql in queries { try same(sql, "step \(step)") }
            try db.step()
        }
        // A write through the column, then the same reads.
        let update = "UPDATE m SET b = b + 10 WHERE \(column) IN ('v2', 'v11')"
        try oracle.execute(update)
        try db.write { try $0.execute(update) }
        for sql in queries + ["SELECT \(column), b FROM m ORDER BY b, \(column)"] { try same(sql, "after an update") }
        try db.migrateAllBlocking()
        for sql in queries { try same(sql, "finished") }
    }
}
