import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// Ferry's own moves and cleanup with foreign keys enforced (the default configuration): a moved
/// row was in the finished table all along, so its parent may still be pending in another migrating
/// table; and deleting moved rows from a source, or dropping it, must not cascade into the source's
/// other tables. Related tables migrate to the end, and the legacy file keeps its unmapped rows.
@Suite(.timeLimit(.minutes(2)))
struct ForeignKeyMigrationTests {
    static let schema = """
        CREATE TABLE conversations(id INTEGER PRIMARY KEY, title TEXT);
        CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER REFERENCES conversations(id) ON DELETE CASCADE, body TEXT);
        """

    /// A legacy file with conversations, their messages and (unmapped) drafts that cascade from
    /// conversations too, and a target with the two mapped tables.
    private func setUp(_ box: Sandbox) throws -> MigrationPlan {
        let legacy = try Connection(path: box.path("legacy.db"))
        try legacy.execute(Self.schema + """
            CREATE TABLE drafts(id INTEGER PRIMARY KEY, conversation_id INTEGER REFERENCES conversations(id) ON DELETE CASCADE);
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 40)
            INSERT INTO conversations SELECT x, 'c' || x FROM n;
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 200)
            INSERT INTO messages SELECT x, 41 - (x % 40 + 1), 'm' || x FROM n;
            INSERT INTO drafts SELECT id, id FROM conversations;
            """)
        legacy.close()
        try Connection(path: box.path("app.db")).execute(Self.schema)
        // Messages first: their batches move rows whose conversation is still pending.
        return MigrationPlan(sources: [MigrationSource(.file(box.path("legacy.db")), tables: [
            TableMapping(target: "messages", source: "messages"), TableMapping(target: "conversations", source: "conversations"),
        ])])
    }

    @Test(arguments: [false, true])
    func relatedTablesMigrateToTheEndAndCleanupCascadesNowhere(keepingSourceTables: Bool) throws {
        let box = Sandbox()
        let plan = try setUp(box)
        var options = FerryDatabase.Options.fixedBatches(of: 7)
        options.keepSourceTables = keepingSourceTables
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: options)
        defer { db.close() }
        #expect(try db.read { db throws(FerryError) in try db.fetchOne("PRAGMA foreign_keys")?[0] } == .integer(1))
        try db.migrateAllBlocking()
        #expect(try db.isMigrated)
        let counts = try db.read { db throws(FerryError) in
            try db.fetchOne("SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM conversations)")?.values
        }
        #expect(counts == [.integer(200), .integer(40)])
        #expect(try db.read { db throws(FerryError) in try db.fetchAll("PRAGMA foreign_key_check") }.isEmpty)
        #expect(try db.verify().isConsistent)
        // The unmapped drafts stay in the legacy file: cleanup cascaded nowhere.
        let legacy = try Connection(path: box.path("legacy.db"))
        #expect(try legacy.scalar("SELECT count(*) FROM drafts", as: Int.self) == 40)
        // The app's connection still enforces foreign keys.
        #expect(throws: FerryError.self) {
            try db.write { db throws(FerryError) in try db.execute("INSERT INTO messages(conversation_id) VALUES (999)") }
        }
    }
}
