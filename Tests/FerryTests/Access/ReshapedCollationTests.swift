import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// A target whose column compares under another collation than the source's (`b TEXT COLLATE
/// NOCASE` fed by a BINARY column): a write picks the pending rows it moves ahead under the target's
/// collation, so it touches the rows the finished table's statement touches.
@Suite(.timeLimit(.minutes(2))) struct ReshapedCollationTests {
    typealias Pair = SchemaStatementTests.Pair
    typealias Placement = SchemaStatementTests.Placement

    static let rows: [(Int, Int, String?, Int)] = [(1, 10, "x", 1), (2, 20, "X", 2), (3, 30, "y", 3), (4, 40, "Y", 4), (5, 50, "z", 5), (6, 60, "Z", 6)]

    static let writes = ["DELETE FROM t WHERE b = 'x'", "UPDATE t SET c = 0 WHERE b = 'y'", "UPDATE t SET c = c + 100 WHERE b > 'X'",
                         "DELETE FROM t WHERE b IN ('z')", "UPDATE t SET a = -a WHERE b BETWEEN 'X' AND 'y'"]

    @Test(arguments: Placement.available, [false, true])
    func writesTouchTheRowsTheFinishedTableWouldTouch(placement: Placement, stepFirst: Bool) throws {
        for write in Self.writes {
            let pair = try Pair(placement: placement, rows: Self.rows, targetBCollation: "COLLATE NOCASE", stepFirst: stepFirst)
            pair.same(write + " RETURNING id, c")
            try pair.sameTable()
            pair.same("SELECT changes()")
            try pair.finish()
        }
    }

    /// Inside a transaction, after a step, twice in a row.
    @Test func writesInOneTransaction() throws {
        let pair = try Pair(placement: .otherFile, rows: Self.rows, targetBCollation: "COLLATE NOCASE", stepFirst: true)
        try pair.runInOneTransaction(["UPDATE t SET c = 9 WHERE b = 'z'", "DELETE FROM t WHERE b = 'X'"])
        try pair.sameTable()
        try pair.finish()
    }
}
