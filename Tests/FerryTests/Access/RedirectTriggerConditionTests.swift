import FerrySQLite
import FerryTestSupport
import Foundation
import Testing
@testable import Ferry

/// The redirect triggers run their moves only when the app's row needs them: a pending row has
/// its rowid or one of its unique keys, or a pending row's rowid lies above every target row (the
/// next automatic rowid). Every other write skips the body. Both kinds must behave as in the
/// finished table, on every placement, before and after a step, and inside one transaction.
@Suite(.timeLimit(.minutes(2))) struct RedirectTriggerConditionTests {
    static let rows: [(Int, Int, String?, Int)] = (1...8).map { ($0, $0 * 10, "m\($0)", $0) }

    @Test(arguments: SchemaStatementTests.Placement.available, [false, true])
    func writesWithAndWithoutMovesMatchTheFinishedTable(placement: SchemaStatementTests.Placement, stepFirst: Bool) throws {
        let pair = try SchemaStatementTests.Pair(placement: placement, rows: Self.rows, appSchema: ["CREATE UNIQUE INDEX t_c ON t(c)"],
                                                 stepFirst: stepFirst)
        // Automatic rowids: the first moves row 8 ahead of it, the second needs no move.
        #expect(pair.same("INSERT INTO t(a, c) VALUES (1, 100) RETURNING id") == "[[9]]")
        #expect(pair.same("INSERT INTO t(a, c) VALUES (1, 101) RETURNING id") == "[[10]]")
        // A pending row's rowid or unique key still conflicts; values no row has do not.
        #expect(pair.same("INSERT INTO t(id, a, c) VALUES (3, 0, 102)").contains("UNIQUE"))
        #expect(pair.same("INSERT INTO t(a, c) VALUES (0, 5)").contains("UNIQUE"))
        pair.same("INSERT INTO t(id, a, c) VALUES (-4, 0, 103) RETURNING id")
        #expect(pair.same("UPDATE t SET c = 6 WHERE id = 9").contains("UNIQUE"))
        pair.same("UPDATE t SET c = 200 WHERE id = 9 RETURNING id, c")
        pair.same("INSERT OR REPLACE INTO t(id, a, c) VALUES (4, 9, 400) RETURNING *")
        // Without the rows above them, the next automatic rowid is again a pending row's plus one.
        pair.same("DELETE FROM t WHERE id >= 8")
        #expect(pair.same("INSERT INTO t(a, c) VALUES (2, 300) RETURNING id") == "[[8]]")
        // Several in one transaction: only the first needs a move (row 7 is the largest pending).
        pair.same("DELETE FROM t WHERE id >= 7")
        try pair.runInOneTransaction(["INSERT INTO t(a, c) VALUES (3, 301)", "INSERT INTO t(a, c) VALUES (3, 302)",
                                      "INSERT INTO t(id, a, c) VALUES (50, 3, 303)", "INSERT INTO t(a, c) VALUES (3, 304)"])
        try pair.sameTable()
        try pair.finish()
    }

    /// With a filter, source rows that do not match are never pending: they neither conflict nor
    /// decide the next automatic rowid.
    @Test(arguments: SchemaStatementTests.Placement.available)
    func rowsOutsideTheFilterNeedNoMove(placement: SchemaStatementTests.Placement) throws {
        let box = Sandbox()
        let cipher: Cipher? = placement == .encrypted ? .passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
        let appPath = box.path("app.db")
        let sourcePath = placement == .sameFile ? appPath : box.path("legacy.db")
        let source = try Connection(path: sourcePath, configuration: .init(cipher: cipher))
        try source.execute("CREATE TABLE legacy(id INTEGER PRIMARY KEY, kind INTEGER NOT NULL)")
        try source.execute("INSERT INTO legacy VALUES (1, 1), (2, 0), (3, 1), (4, 1), (5, 0), (6, 0)")
        source.close()
        let location: MigrationSourceLocation = placement == .sameFile ? .targetFile : .file(sourcePath)
        let plan = MigrationPlan(sources: [MigrationSource(location, cipher: cipher, tables: [TableMapping(target: "t", source: "legacy", filter: "kind = 1")])])
        let db = try FerryDatabase(path: appPath, configuration: .init(cipher: cipher), plan: plan, options: .fixedBatches(of: 1))
        try db.step()  // row 1 moved
        // Rows 5 and 6 do not match: the finished table's largest rowid is 4.
        #expect(try db.write { db throws(FerryError) in try db.scalar("INSERT INTO t(kind) VALUES (7) RETURNING id", as: Int64.self) } == 5)
        try db.write { db throws(FerryError) in try db.execute("INSERT INTO t(id, kind) VALUES (6, 7)") }  // row 6 is not t's
        #expect(throws: FerryError.self) { try db.write { db throws(FerryError) in try db.execute("INSERT INTO t(id, kind) VALUES (3, 7)") } }
        try db.migrateAllBlocking()
        #expect(try db.read { try $0.fetchAll("SELECT id, kind FROM t ORDER BY id").map { [try $0.get(0, as: Int.self), try $0.get(1, as: Int.self)] } }
            == [[1, 1], [3, 1], [4, 1], [5, 7], [6, 7]])
    }
}
