import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// A target with generated columns (VIRTUAL and STORED, one reading another) fed by a source
/// without them: the union computes them for the pending rows as SQLite computes them on the
/// finished table, and moved rows get them from SQLite. Every placement, before and after a step.
@Suite(.timeLimit(.minutes(2)))
struct GeneratedColumnTests {
    static let targetDeclaration = """
        id INTEGER PRIMARY KEY, first TEXT, last TEXT, qty INTEGER, price REAL,
        full TEXT GENERATED ALWAYS AS (first || ' ' || last) VIRTUAL,
        total REAL GENERATED ALWAYS AS (qty * price) STORED,
        label TEXT GENERATED ALWAYS AS (upper(full) || ':' || total)
        """

    @Test(arguments: SchemaStatementTests.Placement.available, [false, true])
    func generatedColumnsReadAsOnTheFinishedTable(placement: SchemaStatementTests.Placement, stepFirst: Bool) throws {
        let box = Sandbox()
        let cipher: Cipher? = placement == .encrypted ? .passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
        let appPath = box.path("app.db")
        let sourcePath = placement == .sameFile ? appPath : box.path("legacy.db")
        let sourceTable = placement == .sameFile ? "t_legacy" : "t"
        let rows = (1...9).map { "(\($0), 'f\($0)', 'l\($0)', \($0 % 4), \(Double($0) * 1.5))" }.joined(separator: ", ")
        let legacy = try Connection(path: sourcePath, configuration: .init(cipher: cipher))
        try legacy.execute("CREATE TABLE \(sourceTable)(id INTEGER PRIMARY KEY, first TEXT, last TEXT, qty INTEGER, price REAL)")
        try legacy.execute("INSERT INTO \(sourceTable) VALUES \(rows)")
        if placement == .sameFile {
            try legacy.execute("CREATE TABLE t(\(Self.targetDeclaration))")
        } else {
            try Connection(path: appPath, configuration: .init(cipher: cipher)).execute("CREATE TABLE t(\(Self.targetDeclaration))")
        }
        legacy.close()
        let oracle = try Connection(path: box.path("oracle.db"))
        try oracle.execute("CREATE TABLE t(\(Self.targetDeclaration)); INSERT INTO t(id, first, last, qty, price) VALUES \(rows)")
        let location: MigrationSourceLocation = placement == .sameFile ? .targetFile : .file(sourcePath)
        let db = try FerryDatabase(path: appPath, configuration: .init(cipher: cipher),
                                   plan: MigrationPlan(sources: [MigrationSource(location, cipher: cipher, tables: [TableMapping(target: "t", source: sourceTable)])]),
                                   options: .fixedBatches(of: 3))
        defer { db.close() }
        if stepFirst { try db.step() }

        func same(_ sql: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let expected: String
            do { expected = "\(try oracle.fetchAll(sql).map(\.values))" } catch { expected = "error \(error.resultCode.primary)" }
            let actual: String
            do { actual = "\(try db.write { db throws(FerryError) in try db.fetchAll(sql).map(\.values) })" } catch { actual = "error \(error.resultCode?.primary ?? .error): \(error)" }
            #expect(actual == expected, "\(sql)", sourceLocation: sourceLocation)
        }
        let everything = "SELECT id, first, last, qty, price, full, total, label FROM t ORDER BY id"
        for sql in [everything, "SELECT * FROM t WHERE total > 5 ORDER BY total DESC", "SELECT rowid, * FROM t ORDER BY 1",
                    "SELECT label, count(*) FROM t GROUP BY label ORDER BY 1", "SELECT full FROM t WHERE full LIKE 'f1%' ORDER BY 1"] {
            same(sql)
        }
        for sql in ["UPDATE t SET qty = qty + 1 WHERE id > 5 RETURNING id, total, label",
                    "INSERT INTO t(first, last, qty, price) VALUES ('new', 'row', 2, 2.5) RETURNING full, total",
                    "DELETE FROM t WHERE total = 0 RETURNING id"] {
            same(sql)
            same(everything)
            try db.step()
        }
        try db.migrateAllBlocking()
        same(everything)
        #expect(try db.verify().isConsistent)
    }
}
