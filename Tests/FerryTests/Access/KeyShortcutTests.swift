import FerrySQLite
import FerryTestSupport
import Foundation
import Synchronization
import Testing
@testable import Ferry

/// Point statements on a migrating table whose key moved already run as on the finished table
/// (`KeyShortcut`): a SELECT reads the target alone, an UPDATE or DELETE skips its moves. Their
/// answers must be the finished table's, on every placement, on the writer and on readers, inside a
/// transaction, after more steps and after the database opens again; keys above the cursor, and
/// values SQLite would compare by affinity, take the full path.
@Suite(.timeLimit(.minutes(2))) struct KeyShortcutTests {
    typealias Pair = SchemaStatementTests.Pair
    static let rows: [(Int, Int, String?, Int)] = (1...8).map { ($0, $0 * 10, "m\($0)", $0) }

    /// Runs `sql` with `arguments` on the finished table and through Ferry (on the writer, or on a
    /// reader); expects the same rows, and returns whether Ferry took the shortcut.
    @discardableResult
    func same(_ pair: Pair, _ sql: String, _ arguments: StatementArguments = .none, reader: Bool = false,
              sourceLocation: SourceLocation = #_sourceLocation) throws -> Bool {
        let expected = "\(try pair.oracle.fetchAll(sql, arguments).map(\.values))"
        let (rows, took) = reader
            ? try pair.db.read { db throws(FerryError) in ("\(try db.fetchAll(sql, arguments).map(\.values))", db.tookKeyShortcut) }
            : try pair.db.write { db throws(FerryError) in ("\(try db.fetchAll(sql, arguments).map(\.values))", db.tookKeyShortcut) }
        #expect(rows == expected, "\(sql) \(arguments)", sourceLocation: sourceLocation)
        return took
    }

    @Test(arguments: SchemaStatementTests.Placement.available, [false, true])
    func lookupsOfMovedKeysReadTheTargetAloneAndAnswerAsTheFinishedTable(placement: SchemaStatementTests.Placement, reader: Bool) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, stepFirst: true)  // rows 1 and 2 moved
        for key in Int64(0)...9 {
            let took = try same(pair, "SELECT * FROM t WHERE id = ?1", [key], reader: reader)
            #expect(took == (key <= 2), "key \(key)")
        }
        #expect(try same(pair, "SELECT a, rowid FROM t WHERE rowid = 2", reader: reader))
        #expect(try !same(pair, "SELECT a, rowid FROM t WHERE rowid = 3", reader: reader))
        #expect(try same(pair, "SELECT b FROM t WHERE c > 0 AND id = :k", ["k": 1], reader: reader))
        #expect(try same(pair, "SELECT count(*), max(b) FROM t AS x WHERE ? = x.id", [2], reader: reader))
        // Values SQLite compares by affinity take the full path (and give the same rows).
        #expect(try !same(pair, "SELECT * FROM t WHERE id = ?1", ["1"], reader: reader))
        #expect(try !same(pair, "SELECT * FROM t WHERE id = ?1", [1.0], reader: reader))
        #expect(try !same(pair, "SELECT * FROM t WHERE id = ?1", [nil], reader: reader))
        // Not pinned: a lower bound, or the table read twice.
        #expect(try !same(pair, "SELECT * FROM t WHERE id >= ?1 ORDER BY id", [2], reader: reader))
        #expect(try !same(pair, "SELECT * FROM t WHERE id = ?1 AND a < (SELECT max(a) FROM t)", [1], reader: reader))
        // Upper bounds and lists: every key they allow must have moved.
        #expect(try same(pair, "SELECT id, a FROM t WHERE id < ?1 ORDER BY id DESC", [3], reader: reader))
        #expect(try !same(pair, "SELECT id, a FROM t WHERE id < ?1 ORDER BY id DESC", [4], reader: reader))
        #expect(try same(pair, "SELECT count(*) FROM t WHERE id BETWEEN -5 AND ?1", [2], reader: reader))
        #expect(try same(pair, "SELECT id FROM t WHERE rowid IN (2, ?1, 0)", [1], reader: reader))
        #expect(try !same(pair, "SELECT id FROM t WHERE rowid IN (2, ?1, 0)", [7], reader: reader))
        // The next step moves rows 3 and 4: their keys take the shortcut from the next statement on.
        try pair.db.step()
        #expect(try same(pair, "SELECT * FROM t WHERE id = ?1", [4], reader: reader))
        #expect(try !same(pair, "SELECT * FROM t WHERE id = ?1", [5], reader: reader))
        try pair.finish()
    }

    @Test(arguments: SchemaStatementTests.Placement.available)
    func writesOfMovedKeysSkipTheirMovesAndChangeWhatTheFinishedTableWould(placement: SchemaStatementTests.Placement) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: ["CREATE UNIQUE INDEX t_c ON t(c)"], stepFirst: true)
        #expect(try same(pair, "UPDATE t SET a = a + 1 WHERE id = ?1 RETURNING *", [1]))
        #expect(try !same(pair, "UPDATE t SET a = a + 1 WHERE id = ?1 RETURNING *", [5]))
        // A pinned write still conflicts with a pending row through the redirect triggers.
        let conflict = pair.run("UPDATE t SET c = 6 WHERE id = 2")
        #expect(conflict.ferry == conflict.finished && conflict.ferry.contains("UNIQUE"))
        #expect(try same(pair, "DELETE FROM t WHERE id = ?1 RETURNING id", [2]))
        #expect(try same(pair, "SELECT * FROM t WHERE id = 2"))
        #expect(try !same(pair, "DELETE FROM t WHERE id = ?1 RETURNING id", [6]))
        #expect(try same(pair, "UPDATE t SET b = 'low' WHERE id <= ?1 RETURNING id, b", [2]))
        #expect(try !same(pair, "DELETE FROM t WHERE id IN (3, 7) RETURNING id"))
        // The app writes a moved key again; the shortcut reads it back.
        pair.same("INSERT INTO t(id, a, c) VALUES (2, 0, 200)")
        #expect(try same(pair, "SELECT * FROM t WHERE id = ?1", [2]))
        #expect(try pair.db.write { db throws(FerryError) in
            try db.execute("UPDATE t SET b = 'x' WHERE id = 1")
            return db.changes
        } == 1)
        try pair.oracle.execute("UPDATE t SET b = 'x' WHERE id = 1")
        // In one transaction: pinned and unpinned statements, moved and pending keys.
        try pair.runInOneTransaction(["UPDATE t SET a = 5 WHERE id = 1", "DELETE FROM t WHERE id = 7", "UPDATE t SET a = 6 WHERE id = 2",
                                      "INSERT INTO t(id, a, c) VALUES (9, 9, 900)", "DELETE FROM t WHERE id = 9", "UPDATE t SET a = 7 WHERE id = 8"])
        try pair.sameTable()
        try pair.finish()
    }

    /// From a source without rowid whose INTEGER key feeds the target's INTEGER PRIMARY KEY, the
    /// rowids below the key cursor (the first source key not passed yet) are settled too.
    @Test(arguments: SchemaStatementTests.Placement.available)
    func aSourceWithoutRowidSettlesTheKeysBelowItsKeyCursor(placement: SchemaStatementTests.Placement) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, appSchema: ["CREATE INDEX t_a ON t(a)"], sourceOptions: " WITHOUT ROWID",
                            stepFirst: true)  // keys 1 and 2 moved; the key cursor is 3
        for key in Int64(0)...9 {
            let took = try same(pair, "SELECT * FROM t WHERE id = ?1", [key], reader: key % 2 == 0)
            #expect(took == (key <= 2), "key \(key)")
        }
        #expect(try same(pair, "SELECT id FROM t WHERE rowid < 3 ORDER BY id"))
        #expect(try same(pair, "DELETE FROM t WHERE id = ?1 RETURNING *", [1]))
        #expect(try !same(pair, "UPDATE t SET a = 0 WHERE id = ?1 RETURNING *", [3]))
        try pair.db.step()  // keys 3 and 4
        #expect(try same(pair, "SELECT * FROM t WHERE id IN (3, 4)"))
        #expect(try !same(pair, "SELECT * FROM t WHERE id IN (3, 5)"))
        try pair.finish()
    }

    /// A reader's snapshot that began before a step keeps its old cursor: the floor it took when it
    /// began is below it, so the keys the step moves still take the full path there (through the
    /// target alone they would be missing: the reader does not see the step's copies).
    @Test(arguments: SchemaStatementTests.Placement.available)
    func aSnapshotOlderThanAStepDoesNotTakeTheStepsKeys(placement: SchemaStatementTests.Placement) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, stepFirst: true)  // rows 1 and 2 moved
        let db = pair.db
        let stepped = try db.read { reader throws(FerryError) -> [String] in
            _ = try reader.fetchAll("SELECT count(*) FROM t")  // the snapshot begins
            let result = Mutex<Result<Void, FerryError>?>(nil)
            let thread = Thread {
                result.withLock { $0 = Result { () throws(FerryError) in _ = try db.step() } }
            }
            thread.start()
            while result.withLock({ $0 == nil }) { usleep(1000) }
            try result.withLock { $0! }.get()
            let old = try reader.fetchAll("SELECT a FROM t WHERE id = ?1", [3]).map { "\($0.values)" }
            #expect(!reader.tookKeyShortcut)
            return old
        }
        #expect(stepped == ["[30]"])
        // A snapshot begun after the step takes it.
        #expect(try same(pair, "SELECT a FROM t WHERE id = ?1", [3], reader: true))
        try pair.finish()
    }

    /// The floors come from the catalog when the database opens: a moved key takes the shortcut
    /// before any step of this launch.
    @Test(arguments: SchemaStatementTests.Placement.available)
    func theFloorIsTheCommittedCursorWhenTheDatabaseOpensAgain(placement: SchemaStatementTests.Placement) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, stepFirst: true)
        try pair.db.step()  // rows 3 and 4
        let reopened = try pair.reopen()
        defer { reopened.close() }
        let (rows, took) = try reopened.read { db throws(FerryError) in
            (try db.fetchAll("SELECT a FROM t WHERE id = ?1", [4]).map { "\($0.values)" }, db.tookKeyShortcut)
        }
        #expect(rows == ["[40]"] && took)
        #expect(try !reopened.read { db throws(FerryError) in
            _ = try db.fetchAll("SELECT a FROM t WHERE id = ?1", [5])
            return db.tookKeyShortcut
        })
    }
}

/// The rowids a source without rowid settles below its key cursor's value.
@Suite struct RowidFloorTests {
    @Test func theFloorIsTheLargestIntegerBelowTheKeyCursor() {
        #expect(ResolvedMapping.rowidFloor(belowKey: .integer(3)) == 2)
        #expect(ResolvedMapping.rowidFloor(belowKey: .integer(-5)) == -6)
        #expect(ResolvedMapping.rowidFloor(belowKey: .integer(.min)) == nil)
        #expect(ResolvedMapping.rowidFloor(belowKey: .real(2.5)) == 2)
        #expect(ResolvedMapping.rowidFloor(belowKey: .real(3.0)) == 2)
        #expect(ResolvedMapping.rowidFloor(belowKey: .real(-0.5)) == -1)
        #expect(ResolvedMapping.rowidFloor(belowKey: .real(1e300)) == nil)
        #expect(ResolvedMapping.rowidFloor(belowKey: .real(.nan)) == nil)
        #expect(ResolvedMapping.rowidFloor(belowKey: .text("a")) == .max)
        #expect(ResolvedMapping.rowidFloor(belowKey: .blob([1])) == .max)
        #expect(ResolvedMapping.rowidFloor(belowKey: .null) == nil)
        #expect(ResolvedMapping.rowidFloor(belowKey: nil) == nil)
    }
}
