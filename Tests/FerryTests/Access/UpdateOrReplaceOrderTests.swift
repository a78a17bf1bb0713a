import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// `UPDATE OR REPLACE` whose new values collide with rows it has not visited yet: the rows it
/// deletes and the rows it changes depend on the order SQLite visits them in, which must be the
/// finished table's, whether the rows were moved or pending, in every placement.
@Suite(.timeLimit(.minutes(2)))
struct UpdateOrReplaceOrderTests {
    typealias Pair = SchemaStatementTests.Pair
    typealias Placement = SchemaStatementTests.Placement

    /// Twenty rows, `a` from 71 to 90 under a unique index; batches of two rows.
    static let rows: [(Int, Int, String?, Int)] = (1...20).map { ($0, 70 + $0, "r\($0)", $0 % 3) }

    @Test(arguments: Placement.available, [0, 3, 12])
    func collidingUpdatesVisitRowsAsTheFinishedTable(placement: Placement, steps: Int) throws {
        for statement in [
            "UPDATE OR REPLACE t SET a = a + 1 WHERE a > 82",
            "UPDATE OR REPLACE t SET a = a + 1 WHERE c = 1",
            "UPDATE OR REPLACE t SET a = a - 1 WHERE a < 80",
            "UPDATE OR REPLACE t SET a = 200 - a WHERE id % 2 = 0",
            "UPDATE OR REPLACE t SET a = a + 2 WHERE b > 'r1'",
            "UPDATE OR REPLACE t SET id = id + 1 WHERE id > 10",
        ] {
            let pair = try Pair(placement: placement, rows: Self.rows, appSchema: ["CREATE UNIQUE INDEX t_a ON t(a)"], stepFirst: false)
            for _ in 0..<steps { try pair.db.step() }
            pair.same(statement + " RETURNING id, a")
            pair.same("SELECT changes()")
            try pair.sameTable()
            try pair.finish()
        }
    }
}
