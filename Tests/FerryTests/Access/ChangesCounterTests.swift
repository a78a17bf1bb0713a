import FerryTestSupport
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// `FerryConnection.changes` follows the app's last INSERT, UPDATE or DELETE whatever its text
/// starts with (the statement's kind comes from SQLite, not from its first word).
@Suite(.timeLimit(.minutes(2))) struct ChangesCounterTests {
    @Test func changesFollowStatementsThatStartWithACommentOrACTE() throws {
        let box = Sandbox()
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: try box.makeLegacy(rows: 20)), options: .fixedBatches(of: 5))
        _ = try db.step()
        try db.write { db in
            try db.execute("UPDATE messages SET body = 'a' WHERE id <= 3")
            #expect(db.changes == 3)
            try db.execute("/* why */ UPDATE messages SET body = 'b' WHERE id <= ?", [.integer(7)])
            #expect(db.changes == 7)
            try db.execute("-- note\n DELETE FROM messages WHERE id > ?", [.integer(18)])
            #expect(db.changes == 2)
            try db.execute("WITH k(v) AS (SELECT 9) UPDATE messages SET body = 'c' WHERE id IN (SELECT v FROM k)")
            #expect(db.changes == 1)
            // Statements that change no row leave the count as it was.
            _ = try db.fetchAll("/* read */ SELECT count(*) FROM messages")
            try db.execute("CREATE TABLE other(x)")
            #expect(db.changes == 1)
        }
    }
}
