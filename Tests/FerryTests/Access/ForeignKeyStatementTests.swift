import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// The app's writes under enforced foreign keys while related tables migrate, against the finished
/// tables (an oracle holding every row): a child of a pending parent is accepted (the parent moves
/// ahead), deleting a parent reaches its pending children (`ON DELETE CASCADE`, through two levels),
/// a `NO ACTION` key still refuses, and a missing parent still fails. Every placement, with steps
/// in between.
@Suite(.timeLimit(.minutes(2)))
struct ForeignKeyStatementTests {
    typealias Placement = SchemaStatementTests.Placement

    static let mappedSchema = """
        CREATE TABLE conversations(id INTEGER PRIMARY KEY, title TEXT);
        CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER REFERENCES conversations(id) ON DELETE CASCADE ON UPDATE CASCADE, body TEXT);
        """
    /// The app's own tables in the target: attachments cascade from messages; pins refuse.
    static let appSchema = """
        CREATE TABLE attachments(id INTEGER PRIMARY KEY, message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE);
        CREATE TABLE pins(message_id INTEGER REFERENCES messages(id));
        """

    struct Setup {
        let box = Sandbox()
        let oracle: Connection
        let db: FerryDatabase

        /// - Parameter orphan: the legacy data (and the oracle) hold message 61 of a conversation
        ///   that does not exist.
        init(placement: Placement, orphan: Bool = false) throws {
            let cipher: Cipher? = placement == .encrypted ? .passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
            let appPath = box.path("app.db")
            let sameFile = placement == .sameFile
            let legacy = try Connection(path: sameFile ? appPath : box.path("legacy.db"), configuration: .init(cipher: cipher))
            let prefix = sameFile ? "legacy_" : ""
            let rows = """
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 12) INSERT INTO {p}conversations SELECT x, 'c' || x FROM n;
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 60) INSERT INTO {p}messages SELECT x, 13 - (x % 12 + 1), 'm' || x FROM n;
                """
            try legacy.execute(Self.schema(prefix: prefix) + rows.replacingOccurrences(of: "{p}", with: prefix))
            let orphanRow = "PRAGMA foreign_keys = OFF; INSERT INTO {p}messages VALUES (61, 99, 'orphan'); PRAGMA foreign_keys = ON;"
            if orphan { try legacy.execute(orphanRow.replacingOccurrences(of: "{p}", with: prefix)) }
            oracle = try Connection(path: box.path("oracle.db"))
            try oracle.execute(ForeignKeyStatementTests.mappedSchema + ForeignKeyStatementTests.appSchema + rows.replacingOccurrences(of: "{p}", with: ""))
            if orphan { try oracle.execute(orphanRow.replacingOccurrences(of: "{p}", with: "")) }
            legacy.close()
            let app = try Connection(path: appPath, configuration: .init(cipher: cipher))
            try app.execute(ForeignKeyStatementTests.mappedSchema + ForeignKeyStatementTests.appSchema)
            app.close()
            let location: MigrationSourceLocation = sameFile ? .targetFile : .file(box.path("legacy.db"))
            // Messages first: the stepper moves children while their parents are pending.
            let plan = MigrationPlan(sources: [MigrationSource(location, cipher: cipher, tables: [
                TableMapping(target: "messages", source: prefix + "messages"), TableMapping(target: "conversations", source: prefix + "conversations"),
            ])])
            db = try FerryDatabase(path: appPath, configuration: .init(cipher: cipher), plan: plan, options: .fixedBatches(of: 5))
        }

        static func schema(prefix: String) -> String {
            """
            CREATE TABLE \(prefix)conversations(id INTEGER PRIMARY KEY, title TEXT);
            CREATE TABLE \(prefix)messages(id INTEGER PRIMARY KEY, conversation_id INTEGER REFERENCES \(prefix)conversations(id), body TEXT);
            """
        }

        /// Runs `sql` on both; expects the same outcome (rows or the error's code and message) and
        /// the same rows in every table.
        func same(_ sql: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let finished: String
            do { finished = "\(try oracle.fetchAll(sql).map(\.values))" } catch { finished = "error \(FerryError(error).resultCode?.primary as Any)" }
            let ferry: String
            do {
                ferry = "\(try db.write { db throws(FerryError) in try db.fetchAll(sql).map(\.values) })"
            } catch {
                ferry = "error \(error.resultCode?.primary as Any)"
            }
            #expect(ferry == finished, "\(sql)", sourceLocation: sourceLocation)
            for table in ["conversations", "messages", "attachments", "pins"] {
                let query = "SELECT * FROM \(table) ORDER BY 1, 2"
                let expected = try? oracle.fetchAll(query).map(\.values)
                let actual = try? db.read { db throws(FerryError) in try db.fetchAll(query).map(\.values) }
                #expect(actual == expected, "\(table) after \(sql)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test(arguments: Placement.available)
    func writesUnderForeignKeysBehaveAsOnTheFinishedTables(placement: Placement) throws {
        let setup = try Setup(placement: placement)
        defer { setup.db.close() }
        try setup.db.step()  // a few messages moved, their conversations still pending
        setup.same("INSERT INTO attachments VALUES (1, 40)")  // a pending message
        setup.same("INSERT INTO pins VALUES (41)")
        setup.same("INSERT INTO messages(id, conversation_id, body) VALUES (100, 7, 'new')")  // a pending conversation
        setup.same("UPDATE messages SET conversation_id = 9 WHERE id = 2")
        setup.same("UPDATE messages SET body = 'edited' WHERE id = 50")  // pending, and so is its conversation
        try setup.db.step()
        setup.same("DELETE FROM conversations WHERE id = 12")  // cascades to pending messages, and on to attachments
        setup.same("UPDATE conversations SET id = 112 WHERE id = 11")  // ON UPDATE CASCADE reaches pending messages
        setup.same("DELETE FROM messages WHERE id = 41")  // pinned: NO ACTION refuses
        setup.same("DELETE FROM conversations WHERE id = 6")  // a pinned message of conversation 6? refuses as on the finished tables
        setup.same("INSERT INTO attachments VALUES (2, 9999)")  // no such message: fails on both
        setup.same("INSERT INTO messages(conversation_id, body) VALUES (999, 'orphan')")
        try setup.db.migrateAllBlocking()
        setup.same("SELECT count(*) FROM messages")
        #expect(try setup.db.read { db throws(FerryError) in try db.fetchAll("PRAGMA foreign_key_check") }.isEmpty)
        #expect(try setup.db.verify().isConsistent)
    }

    /// Child tables and keys the app creates while the tables migrate get the same moves, from the
    /// next statement of the same transaction on.
    @Test(arguments: Placement.available)
    func keysCreatedWhileTablesMigrateMovePendingParentsToo(placement: Placement) throws {
        let setup = try Setup(placement: placement)
        defer { setup.db.close() }
        try setup.db.step()
        let script = [
            "CREATE TABLE notes(id INTEGER PRIMARY KEY, message_id INTEGER REFERENCES messages(id) ON DELETE SET NULL, body TEXT)",
            "INSERT INTO notes VALUES (1, 45, 'on a pending message')",
            "ALTER TABLE attachments ADD COLUMN conversation_id INTEGER REFERENCES conversations(id)",
            "INSERT INTO attachments VALUES (5, 44, 8)",
        ]
        try setup.oracle.transaction { for sql in script { try setup.oracle.execute(sql) } }
        try setup.db.write { db throws(FerryError) in for sql in script { try db.execute(sql) } }
        setup.same("SELECT * FROM notes")
        setup.same("INSERT INTO notes VALUES (2, 46, 'another')")
        setup.same("DELETE FROM messages WHERE id = 46")  // SET NULL
        setup.same("SELECT * FROM notes ORDER BY id")
        try setup.db.migrateAllBlocking()
        setup.same("SELECT * FROM notes ORDER BY id")
        #expect(try setup.db.read { db throws(FerryError) in try db.fetchAll("PRAGMA foreign_key_check") }.isEmpty)
    }

    /// An insert that fails its foreign-key check leaves `lastInsertRowid` as the finished table
    /// does (SQLite keeps the failed row's rowid when the table has a trigger, and Ferry's triggers
    /// are not the app's; found by the differential harness).
    @Test(arguments: Placement.available)
    func aFailedForeignKeyCheckLeavesTheLastRowidAlone(placement: Placement) throws {
        let setup = try Setup(placement: placement)
        defer { setup.db.close() }
        for sql in ["INSERT INTO attachments VALUES (7, 3)", "INSERT INTO attachments(message_id) VALUES (9999)",
                    "INSERT INTO messages(conversation_id) VALUES (999)"] {
            try? setup.oracle.execute(sql)
            _ = try? setup.db.write { db throws(FerryError) in try db.execute(sql) }
            let rowid = try setup.db.write { db throws(FerryError) in db.lastInsertRowid }
            #expect(rowid == setup.oracle.lastInsertRowid, "after \(sql)")
        }
    }

    /// `PRAGMA foreign_key_check` reports the violations of the finished tables: a pending orphan is
    /// one, a moved row whose parent is still pending is not.
    @Test(arguments: Placement.available)
    func foreignKeyCheckReportsTheFinishedTablesViolations(placement: Placement) throws {
        let setup = try Setup(placement: placement, orphan: true)
        defer { setup.db.close() }
        for stage in 0..<3 {
            // Same file: the legacy tables are in the database too (with their own orphan) until
            // cleanup drops them; the oracle has none, so only the forms naming a table compare.
            let everyTable = placement != .sameFile || stage == 2
            for sql in (everyTable ? ["PRAGMA foreign_key_check"] : []) + ["PRAGMA foreign_key_check(messages)",
                        "PRAGMA main.foreign_key_check('messages')", "PRAGMA foreign_key_check(attachments)"] {
                setup.same(sql)
            }
            if stage == 0 { try setup.db.step() } else { try setup.db.migrateAllBlocking() }
        }
        let violations = try setup.db.read { db throws(FerryError) in try db.fetchAll("PRAGMA foreign_key_check").map(\.values) }
        #expect(violations == [[.text("messages"), .integer(61), .text("conversations"), .integer(0)]])
    }

    /// A source table in the target file whose own foreign key references a table the app writes:
    /// the moved rows are still in the source, and SQLite applies the source's key to them. Known
    /// to differ from the finished table (Limitations): a `NO ACTION` key refuses the parent's
    /// delete, a `CASCADE` key changes the source's moved rows and cleanup then refuses. Kept as a
    /// known issue, so that the fix shows as this test's expectations passing.
    @Test(arguments: ["", "ON DELETE CASCADE"])
    func aSameFileSourcesOwnForeignKey(sourceAction: String) throws {
        let box = Sandbox()
        let app = box.path("app.db")
        let schema = """
            CREATE TABLE conversations(id INTEGER PRIMARY KEY, title TEXT);
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 10) INSERT INTO conversations SELECT x, 'c' || x FROM n;
            CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER REFERENCES conversations(id) ON DELETE CASCADE, body TEXT);
            """
        let rows = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 60) INSERT INTO {t} SELECT x, x % 10 + 1, 'm' || x FROM n;"
        let setup = try Connection(path: app)
        try setup.execute(schema + "CREATE TABLE messages_old(id INTEGER PRIMARY KEY, conversation_id INTEGER REFERENCES conversations(id) \(sourceAction), body TEXT);"
                          + rows.replacingOccurrences(of: "{t}", with: "messages_old"))
        setup.close()
        let oracle = try Connection.inMemory()
        try oracle.execute("PRAGMA foreign_keys = ON;" + schema + rows.replacingOccurrences(of: "{t}", with: "messages"))
        let plan = MigrationPlan(sources: [MigrationSource(.targetFile, tables: [TableMapping(target: "messages", source: "messages_old")])])
        let db = try FerryDatabase(path: app, plan: plan, options: .fixedBatches(of: 20))
        defer { db.close() }
        try db.step()
        withKnownIssue("a same-file source's own foreign key acts on its moved rows") {
            for sql in ["DELETE FROM messages WHERE conversation_id = 3", "DELETE FROM conversations WHERE id = 3", "DELETE FROM conversations WHERE id = 4"] {
                try oracle.execute(sql)
                try db.write { db throws(FerryError) in try db.execute(sql) }
            }
            try db.migrateAllBlocking()
        }
        // With CASCADE nothing is lost meanwhile: the target holds the finished table's rows.
        if !sourceAction.isEmpty {
            let expected = try oracle.fetchAll("SELECT * FROM messages ORDER BY id").map(\.values)
            #expect(try db.read { db throws(FerryError) in try db.fetchAll("SELECT * FROM messages ORDER BY id").map(\.values) } == expected)
        }
    }
}
