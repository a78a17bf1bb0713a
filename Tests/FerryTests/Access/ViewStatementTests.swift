import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// Views created and dropped while a table migrates: read through Ferry (in the same transaction,
/// in later ones, on readers) as on the finished table. Every placement, before and after a step.
@Suite(.timeLimit(.minutes(2)))
struct ViewStatementTests {
    typealias Pair = SchemaStatementTests.Pair

    @Test(arguments: SchemaStatementTests.Placement.available, [false, true])
    func viewsCreatedDuringTheMigrationSeeEveryRow(placement: SchemaStatementTests.Placement, stepFirst: Bool) throws {
        let pair = try Pair(placement: placement, rows: SchemaStatementTests.rows, stepFirst: stepFirst)
        let create = "CREATE VIEW big(id, a) AS SELECT id, a FROM t WHERE a > 15"
        try pair.oracle.execute(create)
        // Created and read in one transaction.
        let inTransaction = try pair.db.write { db throws(FerryError) in
            try db.execute(create)
            return try db.fetchAll("SELECT * FROM big ORDER BY id").map(\.values)
        }
        #expect(inTransaction == (try pair.oracle.fetchAll("SELECT * FROM big ORDER BY id").map(\.values)))
        // Read on a reader, over another view, after writes and steps.
        let readOnReader = try pair.db.read { db throws(FerryError) in try db.fetchAll("SELECT count(*), total(a) FROM big").map(\.values) }
        #expect(readOnReader == (try pair.oracle.fetchAll("SELECT count(*), total(a) FROM big").map(\.values)))
        pair.same("CREATE VIEW bigger AS SELECT * FROM big WHERE a > 35")
        pair.same("SELECT * FROM bigger ORDER BY id")
        pair.same("UPDATE t SET a = a + 100 WHERE id = 2")
        try pair.db.step()
        pair.same("SELECT b.id, t.c FROM bigger AS b JOIN t USING (id) ORDER BY 1")
        // Dropped: gone as on the finished table.
        pair.same("DROP VIEW bigger")
        pair.same("SELECT * FROM bigger")
        pair.same("SELECT * FROM big ORDER BY id")
        try pair.finish()
        pair.same("SELECT * FROM big ORDER BY id")
    }

    /// A view's unaliased result columns are named by SQLite after the view's own text (`a%4`, not
    /// a re-print such as `a % 4`), for views the app declared before the migration and during it,
    /// read directly, through another view, and in a transaction.
    @Test(arguments: SchemaStatementTests.Placement.available, [false, true])
    func viewColumnsKeepTheNamesOfTheViewsOwnText(placement: SchemaStatementTests.Placement, stepFirst: Bool) throws {
        let before = "CREATE VIEW shaped AS SELECT a%4, b||'!' ,  c  *2 FROM t WHERE a>15 /* note */"
        let pair = try Pair(placement: placement, rows: SchemaStatementTests.rows, appSchema: [before], stepFirst: stepFirst)
        let during = "CREATE VIEW shaped2 AS SELECT  upper(b) ,\"a\"+ 0, (SELECT max(a)FROM t) FROM shaped, t"
        try pair.oracle.execute(during)
        try pair.db.write { db throws(FerryError) in try db.execute(during) }
        for sql in ["SELECT * FROM shaped", "SELECT * FROM shaped2", "SELECT * FROM (SELECT * FROM shaped)"] {
            let finished = try pair.oracle.fetchAll(sql)
            let ferry = try pair.db.read { db throws(FerryError) in try db.query(sql) }
            #expect(ferry.columns == finished.first?.columnNames, "\(sql)")
            // Unordered: a join's row order is the plan's.
            #expect(ferry.rows.map { "\($0.values)" }.sorted() == finished.map { "\($0.values)" }.sorted(), "\(sql)")
            let inWrite = try pair.db.write { db throws(FerryError) in try db.query(sql).columns }
            #expect(inWrite == finished.first?.columnNames, "\(sql)")
        }
        try pair.finish()
    }

    @Test func aRolledBackViewIsNotServed() throws {
        let pair = try Pair(placement: .otherFile, rows: SchemaStatementTests.rows, stepFirst: false)
        struct Rollback: Error {}
        #expect(throws: Rollback.self) {
            try pair.db.write { db in
                try db.execute("CREATE VIEW gone AS SELECT * FROM t")
                #expect(try db.fetchAll("SELECT * FROM gone").count == 6)
                throw Rollback()
            }
        }
        pair.same("SELECT * FROM gone")  // no such table, on both
        #expect(throws: FerryError.self) { try pair.db.read { db throws(FerryError) in _ = try db.fetchAll("SELECT * FROM gone") } }
    }

    @Test func temporaryViewsStayRefused() throws {
        let pair = try Pair(placement: .otherFile, rows: SchemaStatementTests.rows, stepFirst: false)
        #expect {
            try pair.db.write { db throws(FerryError) in try db.execute("CREATE TEMP VIEW tv AS SELECT * FROM t") }
        } throws: { error in
            guard case FerryError.unsupportedDuringMigration = error else { return false }
            return true
        }
    }
}
