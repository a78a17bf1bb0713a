import FerrySQLite
import FerryTestSupport
import Testing
@testable import Ferry

/// The redirect triggers look a rowid up in the source only when it lies between the smallest and
/// largest rowid a source row has (`PendingRowidRange`, read when they are installed), and look
/// for a pending row above the target's only when the largest lies above it. The app's writes at
/// both ends of that range, below it (negative rowids, the -1 a BEFORE trigger shows for an
/// automatic rowid) and above it must conflict, replace and number rows as the finished table does.
@Suite(.timeLimit(.minutes(2))) struct PendingRowidRangeTests {
    typealias Pair = SchemaStatementTests.Pair
    typealias Placement = SchemaStatementTests.Placement
    /// Rowids at -2, -1 (the automatic rowid's stand-in), and up to 9.
    static let rows: [(Int, Int, String?, Int)] = [-2, -1, 3, 4, 8, 9].map { ($0, $0 * 10, "m\($0)", $0) }

    enum Source: CaseIterable {
        /// A rowid table: the range is the source's rowids.
        case withRowid
        /// `WITHOUT ROWID`, its INTEGER key feeding the target's INTEGER PRIMARY KEY: the range is the key's.
        case withoutRowid
    }

    /// The target exists (with rowid, and an index of the app's) before the plan registers; with
    /// `holding`, it holds a row above every source row then, so no insert needs to move the
    /// largest pending row first (whose move would look every conflict up as well).
    func pair(_ placement: Placement, _ source: Source, holding: Bool = false, stepFirst: Bool) throws -> Pair {
        try Pair(placement: placement, rows: Self.rows,
                 appSchema: ["CREATE INDEX t_a ON t(a)"] + (holding ? ["INSERT INTO t(id, a) VALUES (50, 500)"] : []),
                 sourceOptions: source == .withoutRowid ? "WITHOUT ROWID" : "", stepFirst: stepFirst)
    }

    @Test(arguments: Placement.available, Source.allCases)
    func insertsAtTheEndsOfTheSourcesRowidsConflictAsOnTheFinishedTable(placement: Placement, source: Source) throws {
        let pair = try pair(placement, source, holding: true, stepFirst: false)
        // Both ends, then -1, which an automatic rowid also shows as in a BEFORE INSERT trigger.
        #expect(pair.same("INSERT INTO t(id, a) VALUES (9, 0)").contains("UNIQUE"))
        #expect(pair.same("INSERT INTO t(id, a) VALUES (-2, 0)").contains("UNIQUE"))
        #expect(pair.same("INSERT INTO t(id, a) VALUES (-1, 0)").contains("UNIQUE"))
        pair.same("INSERT OR REPLACE INTO t(id, a, b) VALUES (-1, 1, 'replaced') RETURNING *")
        // Automatic rowids: above every row, as the finished table numbers them.
        pair.same("INSERT INTO t(a) VALUES (100) RETURNING id")
        pair.same("INSERT INTO t(a) VALUES (101) RETURNING id")
        try pair.sameTable()
        // Outside the range, and in a gap inside it.
        pair.same("INSERT INTO t(id, a) VALUES (-3, 2) RETURNING *")
        pair.same("INSERT INTO t(id, a) VALUES (5, 3) RETURNING *")
        #expect(pair.same("INSERT INTO t(id, a) VALUES (8, 0)").contains("UNIQUE"))
        try pair.finish()
    }

    /// Without a row above the source's, the first automatic rowid moves the largest pending row
    /// ahead of the app's (so SQLite numbers the app's row as the finished table would).
    @Test(arguments: Placement.available, Source.allCases)
    func anAutomaticRowidComesAfterEverySourceRow(placement: Placement, source: Source) throws {
        let pair = try pair(placement, source, stepFirst: false)
        // The update moves rows -1 and 8 alone: the target's largest rowid is then one below the
        // source's, and an automatic rowid's -1 finds no pending row (which would move it).
        pair.same("UPDATE t SET a = 0 WHERE id IN (-1, 8)")
        pair.same("INSERT INTO t(a) VALUES (100) RETURNING id")
        #expect(pair.same("INSERT INTO t(id, a) VALUES (-2, 0)").contains("UNIQUE"))
        pair.same("INSERT INTO t(a) VALUES (101) RETURNING id")
        try pair.sameTable()
        try pair.finish()
    }

    @Test(arguments: Placement.available, Source.allCases)
    func updatesOfRowidsIntoTheRangeConflictAsOnTheFinishedTable(placement: Placement, source: Source) throws {
        let pair = try pair(placement, source, holding: true, stepFirst: true)  // -2 and -1 moved
        pair.same("INSERT INTO t(id, a) VALUES (20, 0)")
        #expect(pair.same("UPDATE t SET id = 9 WHERE id = 20").contains("UNIQUE"))
        #expect(pair.same("UPDATE t SET id = 3 WHERE id = 20").contains("UNIQUE"))
        #expect(pair.same("UPDATE t SET id = -1 WHERE id = 20").contains("UNIQUE"))
        pair.same("UPDATE OR REPLACE t SET id = 4 WHERE id = 20 RETURNING *")
        pair.same("UPDATE t SET id = 10 WHERE id = 4 RETURNING *")
        try pair.sameTable()
        // The same after another step, in one transaction with an automatic rowid.
        try pair.db.step()
        try pair.runInOneTransaction(["INSERT INTO t(a) VALUES (7)", "UPDATE t SET a = -a WHERE id = 8"])
        #expect(pair.same("INSERT INTO t(id, a) VALUES (9, 0)").contains("UNIQUE"))
        try pair.sameTable()
        try pair.finish()
    }
}
