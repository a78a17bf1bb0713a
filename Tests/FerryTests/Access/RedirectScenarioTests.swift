import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// WCDB-style scenarios: a migrating table read and written through `FerryDatabase.read/write`
/// behaves like the finished table.
@Suite(.timeLimit(.minutes(3)))
struct RedirectScenarioTests {
    /// A target `messages` fed by legacy.db (ids 1...rows) with the given filter, nothing moved yet.
    func migrating(rows: Int = 20, filter: String? = nil, box: Sandbox) throws -> FerryDatabase {
        let legacy = try box.makeLegacy(rows: rows)
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [TableMapping(target: "messages", source: "messages", filter: filter)])])
        // One batch per step: the scenarios step and expect the table still migrating.
        return try FerryDatabase(path: box.path("app.db"), plan: plan, options: .init(yieldingStepLimit: nil))
    }

    /// Views over a migrating table (created before the migration, in the target) are expanded by
    /// Ferry: they see every row, through column lists and other views; writes through them
    /// (INSTEAD OF triggers) wait for the end of the migration. (Views created and dropped during
    /// the migration: ViewStatementTests.)
    @Test func viewsOverAMigratingTableSeeEveryRow() throws {
        let box = Sandbox()
        try Connection(path: box.path("app.db")).execute("""
            CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, body TEXT);
            CREATE TABLE unrelated(x);
            CREATE VIEW first_conversation(message_id, text) AS SELECT id, body FROM messages WHERE conversation_id = 1;
            CREATE VIEW first_long AS SELECT * FROM first_conversation WHERE message_id > 10;
            CREATE VIEW plain AS SELECT count(*) AS n FROM unrelated;
            CREATE TRIGGER write_through INSTEAD OF DELETE ON first_conversation BEGIN DELETE FROM messages WHERE id = OLD.message_id; END;
            """)
        let db = try migrating(box: box)
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM first_conversation", as: Int.self) } == 7)
        #expect(try db.read { try $0.scalar("SELECT text FROM first_conversation WHERE message_id = 4", as: String.self) } == "message 4")
        #expect(try db.read { try $0.fetchAll("SELECT message_id FROM first_long ORDER BY 1").map { try $0.get(0, as: Int.self) } } == [13, 16, 19])
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM first_long AS f JOIN main.messages AS m ON m.id = f.message_id", as: Int.self) } == 3)
        #expect(try db.read { try $0.scalar("SELECT n FROM plain", as: Int.self) } == 0)
        try db.step(budget: .milliseconds(1))
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM first_conversation", as: Int.self) } == 7)
        #expect(throws: FerryError.self) { try db.write { try $0.execute("DELETE FROM first_conversation WHERE message_id = 4") } }
        try db.migrateAllBlocking()
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM first_long", as: Int.self) } == 3)
        try db.write { try $0.execute("DELETE FROM first_conversation WHERE message_id = 4") }
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM first_conversation", as: Int.self) } == 6)
    }

    @Test func readsSeeUnmovedRowsOnce() throws {
        let box = Sandbox()
        let db = try migrating(box: box)
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 20)
        try db.step(budget: .milliseconds(1))
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 20)
        #expect(try db.read { try $0.scalar("SELECT rowid FROM messages WHERE id = 7", as: Int.self) } == 7)
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages a JOIN messages b USING (id)", as: Int.self) } == 20)
    }

    @Test func updateAndDeleteReportFinishedTableChanges() throws {
        let box = Sandbox()
        let db = try migrating(box: box)
        let changed = try db.write { db -> Int in
            try db.execute("UPDATE messages SET body = 'x' WHERE conversation_id = ?", [1])
            return db.changes
        }
        #expect(changed == 7)
        let deleted = try db.write { db -> [Int64] in
            try db.fetchAll("DELETE FROM messages WHERE id > 17 RETURNING id").map { try $0.get(0, as: Int64.self) }.sorted()
        }
        #expect(deleted == [18, 19, 20])
        try db.migrateAllBlocking()
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages WHERE body = 'x'", as: Int.self) } == 6)
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 17)
    }

    @Test func insertConflictsAndAutomaticRowidsMatchTheFinishedTable() throws {
        let box = Sandbox()
        let db = try migrating(box: box)
        #expect(throws: FerryError.self) { try db.write { try $0.execute("INSERT INTO messages(id, conversation_id, body) VALUES (5, 0, 'dup')") } }
        let rowid = try db.write { db -> Int64 in
            try db.execute("INSERT INTO messages(conversation_id, body) VALUES (9, 'new')")
            return db.lastInsertRowid
        }
        #expect(rowid == 21)
        try db.write { try $0.execute("INSERT OR REPLACE INTO messages(id, conversation_id, body) VALUES (3, 9, 'replaced')") }
        #expect(try db.read { try $0.scalar("SELECT body FROM messages WHERE id = 3", as: String.self) } == "replaced")
        try db.write { try $0.execute("INSERT INTO messages(id, conversation_id, body) VALUES (4, 0, 'up') ON CONFLICT(id) DO UPDATE SET body = 'upserted'") }
        #expect(try db.read { try $0.scalar("SELECT body FROM messages WHERE id = 4", as: String.self) } == "upserted")
        try db.migrateAllBlocking()
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 21)
        #expect(try db.pool.read { try $0.scalar("SELECT count(*) FROM sqlite_master WHERE name LIKE 'ferry_quarantine%'", as: Int.self) } == 0)
    }

    @Test func filteredRowsStayInvisible() throws {
        let box = Sandbox()
        let db = try migrating(filter: "conversation_id = 0", box: box)
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 6)
        try db.write { try $0.execute("DELETE FROM messages WHERE id = 1") }  // not matching: nothing to delete
        #expect(try db.write { _ = try $0.execute("DELETE FROM messages WHERE id = 1"); return $0.changes } == 0)
    }

    @Test func schemaStatementsOnAMigratingTableAreRefused() throws {
        let box = Sandbox()
        let db = try migrating(box: box)
        // (Indexes and the describing pragmas work: SchemaStatementTests.)
        for sql in ["CREATE TEMP VIEW recent AS SELECT * FROM messages", "CREATE TRIGGER tr AFTER INSERT ON messages BEGIN SELECT CASE WHEN (SELECT count(*) FROM messages) > 1 THEN RAISE(ABORT, 'full') END; END"] {
            #expect {
                try db.write { try $0.execute(sql) }
            } throws: { error in
                guard case FerryError.unsupportedDuringMigration(let table, _, _) = error else { return false }
                return table == "messages"
            }
        }
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 20)
        // Tables that do not migrate pass through untouched.
        try db.write { try $0.execute("CREATE TABLE other(x); INSERT INTO other VALUES (1)") }
        #expect(try db.read { try $0.scalar("SELECT x FROM other", as: Int.self) } == 1)
    }

    @Test func dropTableRemovesUnmovedSourceRowsButKeepsFilteredOnes() throws {
        let box = Sandbox()
        let db = try migrating(filter: "conversation_id <> 2", box: box)
        try db.step(budget: .microseconds(100))
        try db.write { try $0.execute("DROP TABLE messages") }
        #expect(throws: FerryError.self) { try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } }
        #expect(try db.isMigrated)
        try db.migrateAllBlocking()  // cleanup: delete the dropped rows from the source
        let legacy = try Connection(path: box.path("legacy.db"))
        #expect(try legacy.scalar("SELECT count(*) FROM messages", as: Int.self) == 7)  // the rows outside the filter: ids 2, 5, ..., 20
        #expect(try legacy.scalar("SELECT count(*) FROM messages WHERE conversation_id <> 2", as: Int.self) == 0)
        // The table can be created again and is an ordinary table.
        try db.write { try $0.execute("CREATE TABLE messages(id INTEGER PRIMARY KEY); INSERT INTO messages VALUES (1)") }
        let rows = try db.read { try $0.fetchAll("SELECT * FROM messages").map(\.values) }
        #expect(rows == [[.integer(1)]], "\(rows)")
    }
}

