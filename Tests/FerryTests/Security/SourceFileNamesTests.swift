import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// A source file often holds more than the tables a plan moves (the app's old database, say).
/// Ferry attaches it, and SQLite looks an unqualified name that `temp` and `main` lack up in every
/// attached database: the app's statements would reach the old file's other tables and views,
/// which the finished database does not have (and which go, with the file, once cleanup detaches
/// it). Ferry reads and writes such names in `main`, as the finished database would: "no such
/// table" until the app creates its own, then the app's.
@Suite(.timeLimit(.minutes(2)))
struct SourceFileNamesTests {
    /// A legacy file with the table the plan moves (`t`) and others it does not (`u`, view `w`),
    /// and the finished database (`t` alone) as the oracle.
    struct Fixture {
        let box = Sandbox()
        let cipher: Cipher?
        let db: FerryDatabase
        let oracle: Connection

        init(encrypted: Bool, stepFirst: Bool) throws {
            cipher = encrypted ? .passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
            let rows = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20) INSERT INTO t SELECT i, i * 10 FROM n"
            let legacy = try Connection(path: box.path("legacy.db"), configuration: .init(cipher: cipher))
            try legacy.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER); \(rows); "
                               + "CREATE TABLE u(x INTEGER); INSERT INTO u VALUES (1), (2), (3); CREATE VIEW w AS SELECT x * 100 AS y FROM u; "
                               + "CREATE TABLE counted(id INTEGER PRIMARY KEY AUTOINCREMENT, x); INSERT INTO counted(x) VALUES (1)")
            legacy.close()
            oracle = try Connection(path: box.path("oracle.db"))
            try oracle.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER); \(rows)")
            let plan = MigrationPlan(sources: [MigrationSource(.file(box.path("legacy.db")), cipher: cipher, tables: [TableMapping(target: "t", source: "t")])])
            db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .fixedBatches(of: 2))
            if stepFirst { try db.step() }
        }

        /// The rows of `sql` run on the finished database and through Ferry in a write (the error's
        /// SQLite code when it fails).
        func both(_ sql: String) -> (ferry: String, finished: String) {
            let finished: String
            do { finished = "\(try oracle.fetchAll(sql).map(\.values))" } catch { finished = Self.code(FerryError(error)) }
            let ferry: String
            do { ferry = "\(try db.write { db throws(FerryError) in try db.fetchAll(sql).map(\.values) })" } catch { ferry = Self.code(error) }
            return (ferry, finished)
        }

        /// The same through a reader (`read { }`).
        func read(_ sql: String) -> String {
            do { return "\(try db.read { db throws(FerryError) in try db.fetchAll(sql).map(\.values) })" } catch { return Self.code(error) }
        }

        static func code(_ error: FerryError) -> String { "error \(error.resultCode.map { "\($0.primary)" } ?? "\(error)")" }

        /// The legacy file's `u`, read directly.
        func legacyRows() throws -> [[Value]] {
            let legacy = try Connection(path: box.path("legacy.db"), configuration: .init(cipher: cipher))
            defer { legacy.close() }
            return try legacy.fetchAll("SELECT x FROM u ORDER BY x").map(\.values)
        }
    }

    @Test(arguments: SQLiteEngine.supportsEncryption ? [false, true] : [false], [false, true])
    func unqualifiedNamesOfASourceFilesOtherTablesMeanMains(encrypted: Bool, stepFirst: Bool) throws {
        let fixture = try Fixture(encrypted: encrypted, stepFirst: stepFirst)
        defer { fixture.db.close() }
        // Before the app has tables of those names: "no such table", read or written, as finished.
        for sql in ["SELECT count(*) FROM u", "SELECT 1 WHERE EXISTS (SELECT 1 FROM u)", "SELECT y FROM w", "SELECT * FROM t JOIN u ON u.x = t.id",
                    "SELECT name, seq FROM sqlite_sequence", "SELECT * FROM counted", "DELETE FROM sqlite_sequence",
                    "INSERT INTO u VALUES (9)", "UPDATE u SET x = 0", "DELETE FROM u", "PRAGMA table_info(u)"] {
            let (ferry, finished) = fixture.both(sql)
            #expect(finished.hasPrefix("error") || finished == "[]", "\(sql)")
            #expect(ferry == finished, "\(sql)")
            #expect(fixture.read(sql) == finished || sql.hasPrefix("INSERT") || sql.hasPrefix("UPDATE") || sql.hasPrefix("DELETE"), "\(sql)")
        }
        #expect(try fixture.legacyRows() == [[.integer(1)], [.integer(2)], [.integer(3)]])
        // A temp table of that name (see Limitations): found when qualified, not by the bare name.
        try fixture.db.write { db throws(FerryError) in
            try db.execute("CREATE TEMP TABLE u(x INTEGER); INSERT INTO temp.u VALUES (5)")
            defer { try? db.execute("DROP TABLE temp.u") }
            #expect(try db.fetchAll("SELECT x FROM temp.u").map(\.values) == [[.integer(5)]])
            #expect(throws: FerryError.self) { try db.fetchAll("SELECT x FROM u") }
        }
        // The app creates its own u and w, in main: every statement reaches them, on the writer and
        // on every reader, as on the finished database.
        for sql in ["CREATE TABLE u(x INTEGER)", "INSERT INTO u VALUES (42)", "CREATE VIEW w AS SELECT x + 1 AS y FROM u", "UPDATE u SET x = x + 1"] {
            try fixture.oracle.execute(sql)
            try fixture.db.write { try $0.execute(sql) }
        }
        for sql in ["SELECT count(*), max(x) FROM u", "SELECT y FROM w", "SELECT t.a, u.x FROM t JOIN u ON u.x = t.id * 2 + 3", "PRAGMA table_info(u)"] {
            let (ferry, finished) = fixture.both(sql)
            #expect(!finished.hasPrefix("error"), "\(sql)")
            #expect(ferry == finished, "\(sql)")
            for _ in 0..<4 { #expect(fixture.read(sql) == finished, "\(sql)") }
        }
        #expect(try fixture.legacyRows() == [[.integer(1)], [.integer(2)], [.integer(3)]])
        // The migration finishes and cleanup detaches the file: the same statements, the same rows.
        _ = try fixture.db.migrateAllBlocking()
        for sql in ["SELECT count(*), max(x) FROM u", "SELECT y FROM w", "SELECT count(*), sum(a) FROM t"] {
            let (ferry, finished) = fixture.both(sql)
            #expect(ferry == finished, "\(sql)")
        }
    }
}
