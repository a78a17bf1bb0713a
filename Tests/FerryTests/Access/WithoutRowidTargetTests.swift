import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// A `WITHOUT ROWID` target fed by a rowid source: reads, writes, conflicts, `changes()` and
/// errors are those of the finished `WITHOUT ROWID` table (it has no rowid: `SELECT rowid` fails
/// alike), the moves carry the source's values alone, conflicts with pending rows are found by the
/// primary key, and `verify` matches rows by it. Every placement, before and after a step.
@Suite(.timeLimit(.minutes(2)))
struct WithoutRowidTargetTests {
    typealias Pair = SchemaStatementTests.Pair
    typealias Placement = SchemaStatementTests.Placement

    static let appSchema = ["CREATE UNIQUE INDEX t_b ON t(b)", "CREATE TABLE log(id INTEGER, what TEXT)",
                            "CREATE TRIGGER t_log AFTER INSERT ON t BEGIN INSERT INTO log VALUES (NEW.id, 'insert'); END"]

    @Test(arguments: Placement.available, [false, true])
    func aTargetWithoutRowidReadsAndWritesAsTheFinishedTable(placement: Placement, stepFirst: Bool) throws {
        let pair = try Pair(placement: placement, rows: SchemaStatementTests.rows, appSchema: Self.appSchema,
                            targetOptions: "WITHOUT ROWID", stepFirst: stepFirst)
        try pair.sameTable()
        pair.same("SELECT * FROM t ORDER BY id")
        pair.same("SELECT count(*), sum(a), group_concat(b, ',') FROM t")
        pair.same("SELECT * FROM t WHERE id = 5")
        // It has no rowid, on both (but for the engine quirk).
        if !EngineQuirks.subqueryRowidReadsNull {
            #expect(pair.same("SELECT rowid, * FROM t").contains("no such column"))
            #expect(pair.same("SELECT t.oid FROM t").hasPrefix("error"))
        }
        #expect(pair.same("UPDATE t SET a = 0 WHERE rowid = 1").hasPrefix("error"))
        // Conflicts with pending rows, by the primary key and by the unique index.
        #expect(pair.same("INSERT INTO t(id, a, b) VALUES (5, 1, 'new')").contains("UNIQUE"))
        #expect(pair.same("INSERT INTO t(id, a, b) VALUES (70, 1, 'z')").contains("UNIQUE"))  // pending row 5 holds 'z'
        pair.same("INSERT OR REPLACE INTO t(id, a, b) VALUES (6, 66, 'replaced') RETURNING *")
        pair.same("INSERT INTO t(id, a, b) VALUES (4, 44, 'up') ON CONFLICT(id) DO UPDATE SET a = excluded.a RETURNING id, a, b")
        pair.same("INSERT OR IGNORE INTO t(id, a, b) VALUES (3, 0, 'ignored'), (71, 7, 'kept')")
        pair.same("SELECT changes()")
        #expect(pair.same("UPDATE t SET id = 2 WHERE id = 1").contains("UNIQUE"))  // onto a pending key
        pair.same("UPDATE t SET id = 80 WHERE id = 1 RETURNING *")
        pair.same("UPDATE t SET c = c + 100 WHERE a > 25 RETURNING id, c")
        pair.same("SELECT changes()")
        pair.same("DELETE FROM t WHERE id IN (2, 3) RETURNING id")
        pair.same("INSERT INTO t(id, a) VALUES (90, 9)")
        try pair.sameTable()
        pair.same("SELECT * FROM log ORDER BY id")
        try pair.db.step()
        try pair.sameTable()
        try pair.finish()
        pair.same("SELECT * FROM log ORDER BY id")
    }

    @Test(arguments: Placement.available)
    func writesInOneTransactionWithAStepBetween(placement: Placement) throws {
        let pair = try Pair(placement: placement, rows: SchemaStatementTests.rows, targetOptions: "WITHOUT ROWID", stepFirst: false)
        try pair.runInOneTransaction(["UPDATE t SET a = -a WHERE id >= 3", "DELETE FROM t WHERE id = 6", "INSERT INTO t(id, a, b) VALUES (7, 70, 'q')",
                                      "INSERT OR REPLACE INTO t(id, b) VALUES (5, 'z2')"])
        try pair.sameTable()
        try pair.db.step()
        try pair.runInOneTransaction(["UPDATE t SET id = id + 100 WHERE id < 5"])
        try pair.sameTable()
        try pair.finish()
    }

    /// A target row that was there before the migration wins over the source row with the same
    /// primary key; the source row is quarantined, not lost.
    @Test(arguments: Placement.available)
    func aSourceRowWhosePrimaryKeyIsTakenIsQuarantined(placement: Placement) throws {
        // On the oracle, the app's row replaces row 3; in the target it is there before the migration.
        let pair = try Pair(placement: placement, rows: SchemaStatementTests.rows, appSchema: ["INSERT OR REPLACE INTO t VALUES (3, 333, 'mine', 0)"],
                            targetOptions: "WITHOUT ROWID", stepFirst: false)
        try pair.db.migrateAllBlocking()
        try pair.sameTable()
        #expect(pair.same("SELECT a, b FROM t WHERE id = 3") == "[[333, 'mine']]")
        let quarantined = try pair.db.pool.read { try $0.fetchAll("SELECT ferry_source_rowid, a FROM ferry_quarantine_t").map(\.values) }
        #expect(quarantined == [[.integer(3), .integer(30)]])
        #expect(try pair.db.verify().isConsistent)
    }

    /// `verify` finds the target row of each moved source row by its primary key, and reports one
    /// that is gone or differs.
    @Test func verifyMatchesRowsByPrimaryKey() throws {
        let pair = try Pair(placement: .otherFile, rows: SchemaStatementTests.rows, targetOptions: "WITHOUT ROWID", stepFirst: true)
        #expect(try pair.db.verify().isConsistent)
        // Behind Ferry's back (a raw connection): one moved row changes, one disappears.
        let raw = try Connection(path: pair.box.path("app.db"))
        try raw.execute("UPDATE t SET a = 0 WHERE id = 1; DELETE FROM t WHERE id = 2")
        raw.close()
        let report = try #require(try pair.db.verify().tables.first)
        #expect(report.rowsMissing == 1 && report.rowsDiffering == 1)
        #expect(report.sampleRowids == [1, 2])
    }

    /// A target without rowid must get every primary-key column from the source, and must keep a
    /// source INTEGER PRIMARY KEY (no rowid would carry it) or key column.
    @Test func registrationNamesWhatAWithoutRowidMappingLacks() throws {
        let box = Sandbox()
        let source = try Connection(path: box.path("legacy.db"))
        try source.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT); INSERT INTO t VALUES (1, 'x')")
        try source.execute("CREATE TABLE keyed(k TEXT PRIMARY KEY, a TEXT) WITHOUT ROWID; INSERT INTO keyed VALUES ('k', 'x')")
        source.close()
        let cases: [(String, TableMapping, (FerryError) -> Bool)] = [
            ("CREATE TABLE t(k TEXT PRIMARY KEY, a TEXT) WITHOUT ROWID", TableMapping(target: "t", source: "t", droppedColumns: ["id"]),
             { if case .schemaMismatch(_, let problems) = $0 { problems.contains { $0.contains("primary key") } } else { false } }),
            ("CREATE TABLE t(a TEXT PRIMARY KEY) WITHOUT ROWID", TableMapping(target: "t", source: "t"),
             { if case .schemaMismatch(_, let problems) = $0 { problems.contains { $0.contains("id reaches no target column") } } else { false } }),
            ("CREATE TABLE keyed(a TEXT PRIMARY KEY) WITHOUT ROWID", TableMapping(target: "keyed", source: "keyed"),
             { if case .schemaMismatch(_, let problems) = $0 { problems.contains { $0.contains("k reaches no target column") } } else { false } }),
        ]
        for (index, (schema, mapping, matches)) in cases.enumerated() {
            let path = box.path("app\(index).db")
            let target = try Connection(path: path)
            try target.execute(schema)
            target.close()
            let plan = MigrationPlan(sources: [MigrationSource(.file(box.path("legacy.db")), tables: [mapping])])
            #expect {
                try FerryDatabase(path: path, plan: plan).close()
            } throws: { error in
                guard let error = error as? FerryError else { return false }
                return matches(error)
            }
            // Nothing was registered.
            #expect(try FerryDatabase.registeredTables(atPath: path) == nil)
        }
    }
}
