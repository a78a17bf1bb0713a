import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// The result columns of a statement on a migrating table are named as on the finished table:
/// the rewrite (a union in place of the table) never shows through a column name.
@Suite(.timeLimit(.minutes(2))) struct ColumnNameTests {
    /// A migrating `messages` (40 source rows) beside a finished copy of the same table.
    final class World {
        let box = Sandbox()
        let db: FerryDatabase
        let finished: Connection

        init(encrypted: Bool) throws {
            let cipher: Cipher? = encrypted ? .passphrase("names", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
            let legacy = try box.makeLegacy(rows: 40, cipher: cipher)
            let schema = """
                CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, body TEXT);
                CREATE TABLE conversations(id INTEGER PRIMARY KEY, title TEXT);
                INSERT INTO conversations VALUES (0, 'zero'), (1, 'one'), (2, 'two');
                CREATE VIEW recent AS SELECT id, upper(body), conversation_id * 2 FROM messages WHERE id > 30;
                """
            try Connection(path: box.path("app.db"), configuration: .init(cipher: cipher)).execute(schema)
            finished = try Connection(path: box.path("finished.db"))
            try finished.execute(schema)
            try finished.execute("INSERT INTO messages SELECT x, x % 3, 'message ' || x FROM generate_series(1, 40)".replacingOccurrences(
                of: "generate_series(1, 40)", with: "(WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 40) SELECT x FROM n)"))
            db = try FerryDatabase(path: box.path("app.db"), configuration: .init(cipher: cipher),
                                   plan: MigrationPlan(sources: [MigrationSource(.file(legacy), cipher: cipher, tables: [
                                       TableMapping(target: "messages", source: "messages"),
                                   ])]), options: .fixedBatches(of: 10))
        }
    }

    static let reads = [
        "SELECT (SELECT max(a.id) FROM messages AS a)",
        "SELECT (SELECT   MAX(id)\n  FROM messages) + 1, count(*) FROM messages",
        "SELECT count(*) FROM messages",
        "SELECT COUNT( * ) AS n, total(id) FROM messages",
        "SELECT messages.id, body, Conversation_ID FROM messages WHERE id = 3",
        "SELECT ID, Body FROM messages WHERE id = 3",
        "SELECT * FROM messages WHERE id < 3",
        "SELECT m.* FROM messages AS m WHERE id < 3",
        "SELECT rowid, body FROM messages WHERE id = 2",
        "SELECT oid, _ROWID_, messages.ROWID FROM messages WHERE id = 2",
        "SELECT (rowid), rowid + 0 FROM messages WHERE id = 2",
        "SELECT id FROM messages UNION ALL SELECT id FROM conversations",
        "SELECT (SELECT max(id) FROM messages) UNION SELECT 1",
        "SELECT 1 UNION SELECT (SELECT max(id) FROM messages)",
        "WITH c AS (SELECT count(*), max(body) FROM messages) SELECT * FROM c",
        "SELECT * FROM (SELECT count(*), 'x' || max(body) FROM messages)",
        "SELECT m.body, c.title FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE m.id < 5",
        "SELECT EXISTS (SELECT 1 FROM messages WHERE id = 5), 2",
        "SELECT id IN (SELECT conversation_id FROM messages) FROM conversations",
        "SELECT (SELECT body FROM messages WHERE id = 1) AS b, (SELECT body FROM messages WHERE id = 1) b2",
        "SELECT * FROM recent",
        "SELECT count(*), \"upper(body)\" FROM recent",
        "SELECT /* note */ (SELECT count(*) -- inner\n FROM messages) FROM conversations WHERE id = 0",
    ]

    static let writes = [
        "UPDATE messages SET body = body || '!' WHERE id = 7 RETURNING id, body, (SELECT count(*) FROM messages)",
        "INSERT INTO messages(conversation_id, body) VALUES (1, 'new') RETURNING rowid, body, length( body )",
        "DELETE FROM messages WHERE id = 9 RETURNING id, upper(body), (SELECT max(id) FROM messages) - id",
        "UPDATE conversations SET title = title WHERE id = 1 RETURNING (SELECT count(*) FROM messages), title",
    ]

    static var placements: [Bool] { SQLiteEngine.supportsEncryption ? [false, true] : [false] }

    @Test(arguments: placements) func namesAreThoseOfTheFinishedTable(encrypted: Bool) throws {
        let world = try World(encrypted: encrypted)
        func check(_ sql: String, step: String) throws {
            let expected = try world.finished.prepare(sql).columnNames
            let migrating = try world.db.read { try $0.query(sql).columns }
            #expect(migrating == expected, "\(step): \(sql)")
        }
        for sql in Self.reads { try check(sql, step: "before any step") }
        _ = try world.db.step()
        _ = try world.db.step()
        for sql in Self.reads { try check(sql, step: "after two steps") }
        // Inside one write transaction, with writes between the reads.
        try world.db.write { db in
            for sql in Self.writes + Self.reads {
                let expected = try world.finished.prepare(sql).columnNames
                let finishedRows = try world.finished.fetchAll(sql)
                let result = try db.query(sql)
                #expect(result.columns == expected, "in a write: \(sql)")
                #expect(result.rows.count == finishedRows.count, "in a write: \(sql)")
            }
        }
        try world.db.migrateAllBlocking()
        for sql in Self.reads { try check(sql, step: "finished") }
    }
}
