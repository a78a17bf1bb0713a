import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// `ALTER TABLE T RENAME TO U` while `T` migrates: `U` is the finished table under its new name
/// (the pending rows included), its indexes, views and the app's triggers follow, Ferry's state
/// follows in the same transaction, and the unchanged plan (still naming `T`) finds `U` at the
/// next open instead of creating and filling a new `T`. Every placement, before and after a step.
@Suite(.timeLimit(.minutes(2)))
struct RenameTableTests {
    typealias Pair = SchemaStatementTests.Pair
    typealias Placement = SchemaStatementTests.Placement

    static let appSchema = ["CREATE UNIQUE INDEX t_b ON t(b)", "CREATE VIEW v AS SELECT id, a FROM t WHERE a > 15",
                            "CREATE TABLE log(id INTEGER)", "CREATE TRIGGER t_log AFTER INSERT ON t BEGIN INSERT INTO log VALUES (NEW.id); END"]

    @Test(arguments: Placement.available, [false, true])
    func aRenamedTableIsTheFinishedTableUnderItsNewName(placement: Placement, stepFirst: Bool) throws {
        let pair = try Pair(placement: placement, rows: SchemaStatementTests.rows, appSchema: Self.appSchema, stepFirst: stepFirst)
        pair.same("ALTER TABLE t RENAME TO messages")
        pair.same("SELECT * FROM messages ORDER BY id")
        // No such table, on both (Ferry names it main.t when the attached source is called t too:
        // an unqualified name never falls through to a source).
        let gone = pair.run("SELECT * FROM t")
        #expect(gone.ferry.contains("no such table") && gone.finished.contains("no such table: t"))
        pair.same("SELECT * FROM v ORDER BY id")
        pair.same("PRAGMA index_list(messages)")
        pair.same("INSERT INTO messages(id, a, b) VALUES (60, 1, 'z')")  // pending row 5 holds 'z'
        pair.same("INSERT OR REPLACE INTO messages(id, a, b) VALUES (61, 1, 'w')")
        pair.same("UPDATE messages SET c = c + 100 WHERE a > 25 RETURNING id, c")
        pair.same("DELETE FROM messages WHERE id = 2")
        pair.same("INSERT INTO messages(a) VALUES (9)")
        pair.same("SELECT * FROM messages ORDER BY id")
        pair.same("SELECT * FROM log ORDER BY id")
        try pair.db.step()
        pair.same("SELECT * FROM messages ORDER BY id")
        try pair.db.migrateAllBlocking()
        pair.same("SELECT * FROM messages ORDER BY id")
        pair.same("SELECT * FROM log ORDER BY id")
        pair.same("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE tbl_name NOT LIKE 'ferry%' ORDER BY name")
        #expect(try pair.db.verify().isConsistent)
        #expect(try pair.db.progress().tables.map(\.name) == ["messages"])
    }

    @Test(arguments: Placement.available)
    func renamedInOneTransactionWithReadsWritesAndANewTableOfTheOldName(placement: Placement) throws {
        let pair = try Pair(placement: placement, rows: SchemaStatementTests.rows, appSchema: Self.appSchema, stepFirst: true)
        let script = [
            "ALTER TABLE t RENAME TO old_t",
            "UPDATE old_t SET a = -a WHERE id > 3",
            "CREATE TABLE t(x)",  // the app's own table now: nothing feeds it
            "INSERT INTO t VALUES (1)",
            "ALTER TABLE old_t RENAME TO kept",
        ]
        let reads = ["SELECT * FROM kept ORDER BY id", "SELECT * FROM t", "SELECT * FROM v ORDER BY id", "SELECT * FROM log ORDER BY id"]
        let inTransaction = try pair.db.write { db throws(FerryError) in
            for sql in script { try db.execute(sql) }
            return try reads.map { sql throws(FerryError) in try db.fetchAll(sql).map(\.values) }
        }
        try pair.oracle.transaction { for sql in script { try pair.oracle.execute(sql) } }
        #expect(inTransaction == (try reads.map { try pair.oracle.fetchAll($0).map(\.values) }))
        // Reopened with the plan that still names t: kept goes on migrating; t stays the app's.
        let reopened = try pair.reopen()
        defer { reopened.close() }
        func readAll() throws -> [[[Value]]] {
            try reads.map { sql in try reopened.read { db throws(FerryError) in try db.fetchAll(sql).map(\.values) } }
        }
        let expected = try reads.map { try pair.oracle.fetchAll($0).map(\.values) }
        #expect(try readAll() == expected)
        try reopened.migrateAllBlocking()
        #expect(try readAll() == expected)
        #expect(try reopened.verify().isConsistent)
        #expect(try FerryDatabase.registeredTables(atPath: pair.box.path("app.db"), configuration: pair.configuration)?.contains("kept") == true)
    }

    @Test(arguments: Placement.available)
    func renamedBackToItsRegisteredName(placement: Placement) throws {
        let pair = try Pair(placement: placement, rows: SchemaStatementTests.rows, stepFirst: true)
        pair.same("ALTER TABLE t RENAME TO u")
        try pair.db.step()
        pair.same("ALTER TABLE u RENAME TO t")
        pair.same("SELECT * FROM t ORDER BY id")
        let reopened = try pair.reopen()
        defer { reopened.close() }
        try reopened.migrateAllBlocking()
        let rows = try reopened.read { db throws(FerryError) in try db.fetchAll("SELECT * FROM t ORDER BY id").map(\.values) }
        #expect(rows == (try pair.oracle.fetchAll("SELECT * FROM t ORDER BY id").map(\.values)))
        #expect(try reopened.verify().isConsistent)
    }

    @Test func aReservedNameIsRefused() throws {
        let pair = try Pair(placement: .otherFile, rows: SchemaStatementTests.rows, stepFirst: false)
        #expect(throws: FerryError.self) {
            try pair.db.write { db throws(FerryError) in try db.execute("ALTER TABLE t RENAME TO ferry_migration_x") }
        }
        pair.same("SELECT * FROM t ORDER BY id")
    }

    /// A finished table whose moved rows are still in the source: cleanup finds it by name, so the
    /// rename is recorded too (found by the differential harness: cleanup took the renamed table
    /// for a dropped one, deleted the moved rows without its count, and refused itself after the
    /// table got its name back).
    @Test(arguments: Placement.available)
    func renamingAFinishedTableBeforeCleanupKeepsCleanupExact(placement: Placement) throws {
        let pair = try Pair(placement: placement, rows: SchemaStatementTests.rows, stepFirst: false)
        // Every row moves; the cleanup has not run.
        while try pair.db.progress().tables.first?.state != .finished { try pair.db.step() }
        pair.same("ALTER TABLE t RENAME TO u")
        try pair.db.step()  // a cleanup chunk, while the table is called u
        pair.same("ALTER TABLE u RENAME TO t")
        try pair.finish()
        let gone = try pair.db.pool.read { db in
            try db.scalar("SELECT count(*) FROM sqlite_master WHERE name = 't_legacy'", as: Int.self)
        }
        #expect(placement != .sameFile || gone == 0)  // the same-file source table is dropped once empty
    }
}
