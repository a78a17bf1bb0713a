import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// A target that holds rows before its migration is registered: a source row that collides with
/// one of them (same rowid or primary key, same value of a unique key) is quarantined right after
/// the registration, before any read, so the migrating table shows what the finished one holds
/// (the target's row wins) from the first statement on. Every placement, rowid and WITHOUT ROWID
/// targets.
@Suite(.timeLimit(.minutes(2)))
struct PreexistingTargetRowsTests {
    typealias Pair = SchemaStatementTests.Pair
    typealias Placement = SchemaStatementTests.Placement

    /// On the oracle the app's rows replace the colliding ones; in the target they are there first.
    static let appSchema = ["CREATE UNIQUE INDEX t_b ON t(b)", "INSERT OR REPLACE INTO t VALUES (3, 333, 'mine', 0)",
                            "INSERT OR REPLACE INTO t VALUES (90, 1, 'z', 0)", "INSERT OR REPLACE INTO t VALUES (91, 2, 'fresh', 0)"]

    @Test(arguments: Placement.available, ["", "WITHOUT ROWID"])
    func collidingSourceRowsNeverShow(placement: Placement, targetOptions: String) throws {
        let pair = try Pair(placement: placement, rows: SchemaStatementTests.rows, appSchema: Self.appSchema,
                            targetOptions: targetOptions, stepFirst: false)
        try pair.sameTable()
        pair.same("SELECT count(*), min(b), max(b), sum(a) FROM t")
        #expect(pair.same("INSERT INTO t(id, a, b) VALUES (3, 0, 'x3')").contains("UNIQUE"))
        pair.same("UPDATE t SET b = 'zz' WHERE id = 90 RETURNING *")
        pair.same("INSERT INTO t(id, a, b) VALUES (5, 55, 'five')")  // row 5 ('z') was quarantined: its id is free
        try pair.db.step()
        try pair.sameTable()
        let progress = try #require(try pair.db.progress().tables.first)
        #expect(progress.rowsQuarantined == 2)
        let quarantined = try pair.db.pool.read { try $0.fetchAll("SELECT id, b FROM ferry_quarantine_t ORDER BY id").map(\.values) }
        #expect(quarantined == [[.integer(3), .null], [.integer(5), .text("z")]])
        // Reopened: the check ran once; the migration finishes and cleanup's count agrees.
        let reopened = try pair.reopen()
        defer { reopened.close() }
        try reopened.migrateAllBlocking()
        #expect(try reopened.read { db throws(FerryError) in try db.fetchAll("SELECT id, a, b FROM t ORDER BY id").map(\.values) }
                == (try pair.oracle.fetchAll("SELECT id, a, b FROM t ORDER BY id").map(\.values)))
        #expect(try reopened.progress().tables.first?.rowsQuarantined == 2)
        #expect(try reopened.verify().isConsistent)
        let sourceLeft = try Connection(path: placement == .sameFile ? pair.box.path("app.db") : pair.box.path("legacy.db"),
                                        configuration: .init(cipher: pair.configuration.cipher))
        defer { sourceLeft.close() }
        #expect(try sourceLeft.scalar("SELECT count(*) FROM sqlite_master WHERE name IN ('t', 't_legacy')", as: Int.self) == (placement == .sameFile ? 1 : 0))
    }

    /// A pre-existing row equal to a source row on a column a *partial* unique index covers, outside
    /// the index's `WHERE`: the rows collide with nothing (the finished table holds both), so the
    /// source row is not quarantined. SQLite decides, by moving the row under a rolled-back
    /// savepoint, not an equal-key test.
    @Test(arguments: Placement.available, [false, true])
    func aPartialUniqueIndexHidesNoRowOutsideItsWhere(placement: Placement, stepFirst: Bool) throws {
        let appSchema = ["CREATE UNIQUE INDEX t_c ON t(c) WHERE c > 90", "INSERT OR REPLACE INTO t VALUES (100, 0, 'held', 5.0)",
                         "INSERT OR REPLACE INTO t VALUES (101, 0, 'held', 95)"]
        let pair = try Pair(placement: placement, rows: Self.rowsWithALargeC, appSchema: appSchema, stepFirst: stepFirst)
        try pair.sameTable()
        pair.same("SELECT count(*), sum(c) FROM t")
        #expect(try pair.db.progress().tables.first?.rowsQuarantined == 1, "row 7 (c = 95) collides; row 5 (c = 5) does not")
        let reopened = try pair.reopen()
        defer { reopened.close() }
        try reopened.migrateAllBlocking()
        #expect(try reopened.read { db throws(FerryError) in try db.fetchAll("SELECT id, a, b, c FROM t ORDER BY id").map(\.values) }
                == (try pair.oracle.fetchAll("SELECT id, a, b, c FROM t ORDER BY id").map(\.values)))
    }

    /// `SchemaStatementTests.rows` and a row whose `c` the partial index covers.
    static let rowsWithALargeC = SchemaStatementTests.rows + [(7, 70, "v", 95)]
}
