import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// `ALTER TABLE T RENAME COLUMN` while `T` migrates: the renamed column keeps its feed, so the
/// pending rows read (and move) their value under the new name; indexes, unique keys, views and
/// the app's triggers follow it as on the finished table; the rename survives a reopen with the
/// same plan and the end of the migration. Every placement, before and after a step.
@Suite(.timeLimit(.minutes(2)))
struct RenameColumnTests {
    typealias Pair = SchemaStatementTests.Pair
    typealias Placement = SchemaStatementTests.Placement

    static let everything = "SELECT * FROM t ORDER BY id"

    @Test(arguments: Placement.available, [false, true])
    func aRenamedColumnKeepsItsValuesOnEveryRow(placement: Placement, stepFirst: Bool) throws {
        let pair = try Pair(placement: placement, rows: SchemaStatementTests.rows,
                            appSchema: ["CREATE UNIQUE INDEX t_b ON t(b)", "CREATE VIEW v AS SELECT id, b FROM t WHERE a > 15"],
                            stepFirst: stepFirst)
        pair.same("ALTER TABLE t RENAME COLUMN b TO label")
        pair.same(Self.everything)
        pair.same("SELECT id, label FROM t WHERE label IS NOT NULL ORDER BY label")
        pair.same("SELECT * FROM v ORDER BY id")
        pair.same("PRAGMA table_info(t)")
        pair.same("PRAGMA index_info(t_b)")
        pair.same("SELECT b FROM t")  // no such column, on both
        // The unique key follows the column: pending row 5 holds 'z'.
        pair.same("INSERT INTO t(id, a, label) VALUES (50, 1, 'z')")
        pair.same("INSERT OR REPLACE INTO t(id, a, label) VALUES (51, 1, 'w')")
        pair.same("INSERT INTO t(id, label) VALUES (52, 'y') ON CONFLICT(label) DO UPDATE SET a = 0")
        pair.same("UPDATE t SET label = label || '!' WHERE a > 25 RETURNING id, label")
        try pair.sameTable(columns: "id, a, label, c")
        try pair.db.step()
        pair.same(Self.everything)
        try pair.db.migrateAllBlocking()
        pair.same(Self.everything)
        pair.same("SELECT * FROM v ORDER BY id")
        #expect(try pair.db.verify().isConsistent)
    }

    @Test(arguments: Placement.available)
    func renamesChainAndMixWithAddedColumns(placement: Placement) throws {
        let pair = try Pair(placement: placement, rows: SchemaStatementTests.rows, stepFirst: true)
        let script = [
            "ALTER TABLE t RENAME COLUMN a TO z",
            "ALTER TABLE t ADD COLUMN a INTEGER DEFAULT -1",  // the old name, now an added column: never fed
            "ALTER TABLE t RENAME COLUMN z TO y",
            "ALTER TABLE t RENAME COLUMN a TO added",
            "ALTER TABLE t RENAME COLUMN c TO cc",
            "ALTER TABLE t RENAME COLUMN cc TO c",  // back to its own name
        ]
        // Half in one transaction with reads, half one by one.
        let inTransaction = try pair.db.write { db throws(FerryError) in
            for sql in script.prefix(3) { try db.execute(sql) }
            return try db.fetchAll(Self.everything).map(\.values)
        }
        for sql in script.prefix(3) { try pair.oracle.execute(sql) }
        #expect(inTransaction == (try pair.oracle.fetchAll(Self.everything).map(\.values)))
        for sql in script.dropFirst(3) { pair.same(sql) }
        pair.same(Self.everything)
        pair.same("UPDATE t SET added = y + c WHERE y > 30")
        pair.same(Self.everything)
        // Reopened with the same plan (it still says nothing of the renames).
        let reopened = try pair.reopen()
        defer { reopened.close() }
        let expected = try pair.oracle.fetchAll(Self.everything).map(\.values)
        #expect(try reopened.read { db throws(FerryError) in try db.fetchAll(Self.everything).map(\.values) } == expected)
        try reopened.step()
        #expect(try reopened.read { db throws(FerryError) in try db.fetchAll(Self.everything).map(\.values) } == expected)
        try reopened.migrateAllBlocking()
        #expect(try reopened.read { db throws(FerryError) in try db.fetchAll(Self.everything).map(\.values) } == expected)
        #expect(try reopened.verify().isConsistent)
    }

    @Test(arguments: Placement.available)
    func theAppsTriggersFollowARenamedColumn(placement: Placement) throws {
        let trigger = "CREATE TRIGGER t_log AFTER INSERT ON t WHEN NEW.b IS NOT NULL BEGIN INSERT INTO log VALUES (NEW.id, NEW.b); END"
        let pair = try Pair(placement: placement, rows: SchemaStatementTests.rows,
                            appSchema: ["CREATE TABLE log(id INTEGER, b TEXT)", trigger], stepFirst: true)
        pair.same("ALTER TABLE t RENAME COLUMN b TO label")
        pair.same("INSERT INTO t(id, label) VALUES (70, 'seventy')")
        pair.same("UPDATE t SET a = 0 WHERE id > 3")  // moves rows: the trigger stays quiet
        pair.same("INSERT OR REPLACE INTO t(id, label) VALUES (6, 'six')")
        pair.same("SELECT * FROM log ORDER BY id")
        try pair.db.migrateAllBlocking()
        pair.same("SELECT * FROM log ORDER BY id")
        // The trigger reads as on the finished table (SQLite rewrote NEW.b to NEW.label on both).
        pair.same("SELECT sql FROM sqlite_master WHERE name = 't_log'")
        pair.same("INSERT INTO t(id, label) VALUES (71, 'after')")
        pair.same("SELECT * FROM log ORDER BY id")
    }

    @Test func aRolledBackRenameLeavesNoTrace() throws {
        let pair = try Pair(placement: .otherFile, rows: SchemaStatementTests.rows, stepFirst: false)
        struct Rollback: Error {}
        #expect(throws: Rollback.self) {
            try pair.db.write { db in
                try db.execute("ALTER TABLE t RENAME COLUMN a TO z")
                #expect(try db.fetchAll("SELECT z FROM t").count == 6)
                throw Rollback()
            }
        }
        pair.same(Self.everything)
        try pair.db.migrateAllBlocking()
        pair.same(Self.everything)
    }
}

/// A schema change rolled back, then another one in the next transaction: main's schema version
/// is the same number both times, and the second must not be served with the first one's redirector.
@Suite struct RolledBackSchemaChangeTests {
    typealias Pair = SchemaStatementTests.Pair
    struct Rollback: Error {}

    @Test(arguments: SchemaStatementTests.Placement.available)
    func aSecondChangeAfterARollbackIsServedWithItsOwnSchema(placement: SchemaStatementTests.Placement) throws {
        let pair = try Pair(placement: placement, rows: SchemaStatementTests.rows, stepFirst: true)
        for (first, second, read) in [
            ("CREATE VIEW v1 AS SELECT a FROM t", "CREATE VIEW v2 AS SELECT c FROM t", "SELECT * FROM v2 ORDER BY 1"),
            ("ALTER TABLE t RENAME COLUMN a TO z", "ALTER TABLE t RENAME COLUMN a TO w", "SELECT * FROM t ORDER BY id"),
            ("ALTER TABLE t ADD COLUMN d DEFAULT 1", "ALTER TABLE t ADD COLUMN e DEFAULT 2", "SELECT * FROM t ORDER BY id"),
        ] {
            #expect(throws: Rollback.self) {
                try pair.db.write { db in
                    try db.execute(first)
                    _ = try db.fetchAll(read.replacingOccurrences(of: "v2", with: "t"))
                    throw Rollback()
                }
            }
            pair.same(second)
            pair.same(read)
            let readerView = try pair.db.read { db throws(FerryError) in try db.fetchAll(read).map(\.values) }
            #expect(readerView == (try pair.oracle.fetchAll(read).map(\.values)))
        }
        try pair.finish()
    }
}
