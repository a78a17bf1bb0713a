import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// The app's own connection is a door too: every statement that would reach Ferry's catalog, an
/// attached source, a registered source file, a key or a function that writes files is refused
/// inside SQLite (the authorizer) with `FerryError.accessDenied`, and changes nothing.
@Suite(.timeLimit(.minutes(2))) struct AuthorizerTests {
    /// A migration in progress: `app.db`'s `messages` fed by `legacy.db` (40 rows), 10 moved.
    final class World {
        let box = Sandbox()
        let target: String
        let legacy: String
        let cipher: Cipher?
        let db: FerryDatabase
        /// The attached source's schema name (`ferry_src_N`).
        let schema: String

        /// `legacySQL` runs on the legacy file before the plan is registered (an index, say).
        init(encrypted: Bool = false, legacySQL: String? = nil) throws {
            target = box.path("app.db")
            cipher = encrypted ? .passphrase("authorizer-key", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
            legacy = try box.makeLegacy(rows: 40, cipher: cipher)
            if let legacySQL { try Connection(path: legacy, configuration: .init(cipher: cipher)).execute(legacySQL) }
            try Connection(path: target, configuration: .init(cipher: cipher)).execute("CREATE TABLE keep(x); INSERT INTO keep VALUES (1)")
            let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), cipher: cipher, tables: [
                TableMapping(target: "messages", source: "messages"),
            ])])
            db = try FerryDatabase(path: target, configuration: .init(cipher: cipher), plan: plan, options: .fixedBatches(of: 10))
            _ = try db.step()
            schema = try db.read { try $0.scalar("SELECT name FROM pragma_database_list WHERE name LIKE 'ferry\\_src\\_%' ESCAPE '\\'", as: String.self) } ?? "?"
        }

        /// What must not change: the app's view of its tables, Ferry's catalog, the target's and
        /// the source's schemas, and the source's rows.
        func snapshot() throws -> [String] {
            var parts: [String] = []
            parts += try db.read { db in
                try db.fetchAll("SELECT id, conversation_id, body FROM messages ORDER BY id").map { "\($0.values)" }
                    + db.fetchAll("SELECT x FROM keep ORDER BY x").map { "\($0.values)" }
            }
            let raw = try Connection(path: target, configuration: .init(cipher: cipher))
            for sql in ["SELECT type, name, sql FROM sqlite_master ORDER BY name", "SELECT * FROM ferry_migration_tables",
                        "SELECT * FROM ferry_migration_sources", "SELECT count(*), total(source_rowid) FROM ferry_migration_moved",
                        "SELECT count(*) FROM main.messages"] {
                parts += try raw.fetchAll(sql).map { "\(sql): \($0.values)" }
            }
            raw.close()
            let source = try Connection(path: legacy, configuration: .init(cipher: cipher))
            parts += try source.fetchAll("SELECT type, name, sql FROM sqlite_master ORDER BY name").map { "source \($0.values)" }
            parts += try messages(source, table: "messages").map { "source \($0)" }
            source.close()
            return parts
        }

        /// Runs `sql` in a write and expects `accessDenied` naming `object`, with nothing changed.
        func expectDenied(_ sql: String, _ arguments: StatementArguments = .none, object: String? = nil, read: Bool = false,
                          sourceLocation: SourceLocation = #_sourceLocation) throws {
            let before = try snapshot()
            do {
                if read {
                    try db.read { _ = try $0.fetchAll(sql, arguments) }
                } else {
                    try db.write { try $0.execute(sql, arguments) }
                }
                Issue.record("accepted: \(sql)", sourceLocation: sourceLocation)
            } catch let error as FerryError {
                if case .accessDenied(let denied, let statement, let reason) = error {
                    if let object { #expect(denied.lowercased().contains(object.lowercased()), "\(denied)", sourceLocation: sourceLocation) }
                    // The statement as written, but a key's literals (`SecretRedaction`).
                    #expect(statement == SecretRedaction.redactingKeyLiterals(sql) && !reason.isEmpty, "\(statement)", sourceLocation: sourceLocation)
                } else {
                    Issue.record("\(sql): \(error)", sourceLocation: sourceLocation)
                }
            }
            #expect(try snapshot() == before, "\(sql) changed something", sourceLocation: sourceLocation)
        }

        /// Finishes the migration and checks every source row arrived exactly once.
        func expectMigrationCompletes(sourceLocation: SourceLocation = #_sourceLocation) throws {
            try db.migrateAllBlocking()
            let ids = try db.read { try $0.fetchAll("SELECT id FROM messages ORDER BY id").map { try $0.get(0, as: Int.self) } }
            #expect(ids == Array(1...40), sourceLocation: sourceLocation)
        }
    }

    static var placements: [Bool] { SQLiteEngine.supportsEncryption ? [false, true] : [false] }

    @Test(arguments: placements) func writesToFerrysStateAndSourcesAreRefused(encrypted: Bool) throws {
        let world = try World(encrypted: encrypted)
        let s = world.schema
        try world.expectDenied("DELETE FROM \(s).messages WHERE id < 30", object: "\(s).messages")
        try world.expectDenied("UPDATE \"\(s)\".messages SET body = 'x'", object: "\(s).messages")
        try world.expectDenied("INSERT INTO \(s).messages(id, conversation_id, body) VALUES (100, 1, 'x')", object: "\(s).messages")
        try world.expectDenied("UPDATE ferry_migration_tables SET cursor = 1000", object: "ferry_migration_tables")
        try world.expectDenied("UPDATE main.FERRY_MIGRATION_TABLES SET state = 'finished'", object: "ferry_migration_tables")
        try world.expectDenied("INSERT INTO ferry_migration_moved(target, source_rowid) VALUES ('messages', 25)", object: "ferry_migration_moved")
        try world.expectDenied("DELETE FROM ferry_migration_sources", object: "ferry_migration_sources")
        try world.expectDenied("INSERT INTO temp.ferry_redirect_suspended VALUES (1)", object: "ferry_redirect_suspended")
        try world.expectDenied("REPLACE INTO ferry_migration_flags SELECT * FROM ferry_migration_flags", object: "ferry_migration_flags")
        // Through a CTE and a subquery: still a write to the catalog.
        try world.expectDenied("WITH c AS (SELECT 1) UPDATE ferry_migration_tables SET cursor = (SELECT 99 FROM c)", object: "ferry_migration_tables")
        try world.expectMigrationCompletes()
    }

    @Test(arguments: placements) func schemaChangesOnFerrysObjectsAreRefused(encrypted: Bool) throws {
        let world = try World(encrypted: encrypted)
        let s = world.schema
        try world.expectDenied("DROP TABLE \(s).messages", object: s)
        try world.expectDenied("ALTER TABLE \(s).messages ADD COLUMN extra", object: s)
        try world.expectDenied("CREATE INDEX \(s).evil ON messages(body)", object: s)
        try world.expectDenied("DROP TABLE ferry_migration_moved", object: "ferry_migration_moved")
        try world.expectDenied("ALTER TABLE ferry_migration_tables RENAME TO t2", object: "ferry_migration_tables")
        try world.expectDenied("CREATE INDEX evil ON ferry_migration_moved(target)", object: "evil")
        try world.expectDenied("DROP TRIGGER temp.ferry_redirect_insert_messages", object: "ferry_redirect_insert_messages")
        try world.expectDenied("CREATE TEMP TRIGGER ferry_redirect_evil BEFORE INSERT ON keep BEGIN DELETE FROM ferry_migration_moved; END",
                               object: "ferry_redirect_evil")
        try world.expectDenied("CREATE TABLE ferry_migration_extra(x)", object: "ferry_migration_extra")
        try world.expectDenied("DETACH \(s)", object: s)
        // A temp object named like the migrating table would take its place for unqualified names
        // (the app's writes and the redirect triggers' moves would land in it).
        try world.expectDenied("CREATE TABLE temp.messages(id INTEGER PRIMARY KEY, conversation_id, body)", object: "messages")
        try world.expectDenied("CREATE VIEW temp.Messages AS SELECT 1", object: "messages")
        try world.db.write { try $0.execute("CREATE TEMP TABLE scratch(x)") }
        try world.expectDenied("ALTER TABLE temp.scratch RENAME TO messages", object: "scratch")
        try world.db.write { try $0.execute("CREATE TEMP TABLE other(x); INSERT INTO other VALUES (1); DROP TABLE temp.other") }
        try world.expectMigrationCompletes()
    }

    @Test(arguments: placements) func keysPragmasAndTransactionsAreRefused(encrypted: Bool) throws {
        let world = try World(encrypted: encrypted)
        let s = world.schema
        for sql in ["PRAGMA \(s).rekey = 'x'", "PRAGMA rekey = 'x'", "PRAGMA key = 'x'", "PRAGMA hexrekey = '00ff'",
                    "PRAGMA \(s).cipher_compatibility = 3", "PRAGMA cipher_migrate", "PRAGMA \(s).journal_mode = DELETE",
                    "PRAGMA \(s).user_version = 7", "PRAGMA writable_schema = ON", "PRAGMA journal_mode = DELETE",
                    "PRAGMA locking_mode = EXCLUSIVE", "PRAGMA wal_autocheckpoint = 10", "PRAGMA case_sensitive_like = 1",
                    "PRAGMA recursive_triggers = ON", "PRAGMA schema_version = 1"] {
            try world.expectDenied(sql, object: "PRAGMA")
        }
        try world.expectDenied("PRAGMA \(s).table_info(messages)", object: "PRAGMA", read: true)
        try world.expectDenied("DETACH ?", [.text(s)], object: "DETACH")
        try world.expectDenied("COMMIT", object: "COMMIT")
        try world.expectDenied("ROLLBACK", object: "ROLLBACK")
        try world.expectDenied("BEGIN", object: "BEGIN")
        // Harmless pragmas still work, on the app's own database.
        try world.db.write { db in
            try db.execute("PRAGMA user_version = 3")
            _ = try db.fetchAll("PRAGMA journal_mode")
            _ = try db.fetchAll("PRAGMA table_info(keep)")
            try db.execute("PRAGMA recursive_triggers = OFF")
            try db.execute("SAVEPOINT s; INSERT INTO keep VALUES (2); RELEASE s")
        }
        #expect(try world.db.read { try $0.scalar("PRAGMA user_version", as: Int.self) } == 3)
        try world.expectMigrationCompletes()
    }

    @Test(arguments: placements) func attachingTheMigrationsFilesIsRefused(encrypted: Bool) throws {
        let world = try World(encrypted: encrypted)
        let link = world.box.path("link.db")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: world.legacy)
        let hard = world.box.path("hard.db")
        try FileManager.default.linkItem(atPath: world.legacy, toPath: hard)
        let key = encrypted ? " KEY 'authorizer-key'" : ""
        for file in [world.legacy, link, hard, "file:\(world.legacy)?mode=ro", "file://\(world.legacy.replacingOccurrences(of: "-", with: "%2D"))",
                     world.target, world.box.path("./legacy.db")] {
            try world.expectDenied("ATTACH '\(file)' AS x\(key)", object: "ATTACH")
        }
        try world.expectDenied("ATTACH ? AS x", [.text(world.legacy)], object: "ATTACH")
        // A schema name Ferry reserves is refused whatever the file (SQLite shows an authorizer the
        // file of an ATTACH, not its name): read from the statement before it runs.
        let other = world.box.path("other.db")
        try Connection(path: other).execute("CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id, body)")
        let plainKey = encrypted ? " KEY ''" : ""  // a plain file beside an encrypted target
        for name in ["ferry_src_2", "FERRY_SRC_9", "ferry_plan_0"] {
            try world.expectDenied("ATTACH '\(other)' AS \(name)\(plainKey)", object: "ATTACH as \(name)")
            try world.expectDenied("ATTACH ? AS ?", [.text(other), .text(name)], object: "ATTACH")
        }
        #expect(try world.db.write { db in try db.fetchAll("PRAGMA database_list").count } == 3)  // main, temp, the source
        // Another file under another name is the app's business.
        try world.db.write { try $0.execute("ATTACH '\(other)' AS other\(plainKey)") }
        #expect(try world.db.write { try $0.scalar("SELECT count(*) FROM other.messages", as: Int.self) } == 0)
        try world.expectMigrationCompletes()
    }

    @Test(arguments: placements) func functionsThatWriteFilesOrExportAreRefused(encrypted: Bool) throws {
        let world = try World(encrypted: encrypted)
        if SQLiteEngine.supportsEncryption {
            try world.expectDenied("SELECT sqlcipher_export('\(world.schema)')", object: "sqlcipher_export", read: true)
            try world.expectDenied("SELECT sqlcipher_export('\(world.schema)')", object: "sqlcipher_export")
            try world.expectDenied("UPDATE messages SET body = 'x' WHERE sqlcipher_export('\(world.schema)') IS NULL", object: "sqlcipher_export")
        }
        try world.expectDenied("SELECT load_extension('/nonexistent')", object: "load_extension", read: true)
        try world.expectDenied("DELETE FROM messages WHERE load_extension('/nonexistent') IS NULL", object: "load_extension")
        try world.expectMigrationCompletes()
    }

    /// Triggers and views of the app cannot reach Ferry's state either: their statements are
    /// checked when a statement that fires or reads them compiles.
    @Test(arguments: placements) func triggersOfTheAppCannotReachFerrysState(encrypted: Bool) throws {
        let world = try World(encrypted: encrypted)
        try world.db.write { db in
            try db.execute("CREATE TRIGGER evil AFTER INSERT ON keep BEGIN UPDATE ferry_migration_tables SET cursor = 1000000; END")
            try db.execute("CREATE TEMP VIEW v AS SELECT 1 AS x")
            try db.execute("CREATE TEMP TRIGGER through_view INSTEAD OF INSERT ON v BEGIN INSERT INTO ferry_migration_moved(target, source_rowid) VALUES ('messages', 30); END")
        }
        try world.expectDenied("INSERT INTO keep VALUES (5)", object: "ferry_migration_tables")
        try world.expectDenied("INSERT INTO v VALUES (1)", object: "ferry_migration_moved")
        // Reading a source directly is allowed (it changes nothing).
        #expect(try world.db.read { try $0.scalar("SELECT count(*) FROM \(world.schema).messages", as: Int.self) } == 40)
        // Ferry's own steps do not run the app's trigger either way.
        try world.db.write { try $0.execute("DROP TRIGGER evil") }
        try world.expectMigrationCompletes()
    }

    /// A refused statement inside a larger write fails the whole write: the statements before it
    /// in the same `write { }` roll back with it; the connection works afterwards, also after steps.
    @Test(arguments: placements) func aRefusalRollsBackItsWriteAndTheConnectionGoesOn(encrypted: Bool) throws {
        let world = try World(encrypted: encrypted)
        let before = try world.snapshot()
        #expect(throws: FerryError.self) {
            try world.db.write { db in
                try db.execute("UPDATE messages SET body = 'edited' WHERE id = 35")
                try db.execute("INSERT INTO keep VALUES (9)")
                try db.execute("UPDATE ferry_migration_tables SET cursor = 1000")
            }
        }
        #expect(try world.snapshot() == before)
        // A caught refusal inside the write leaves the rest of the write to commit.
        try world.db.write { db in
            try db.execute("UPDATE messages SET body = 'edited' WHERE id = 35")
            #expect(throws: FerryError.self) { try db.execute("DELETE FROM \(world.schema).messages") }
            try db.execute("INSERT INTO keep VALUES (9)")
        }
        _ = try world.db.step()
        try world.expectDenied("DELETE FROM \(world.schema).messages", object: "messages")
        try world.expectMigrationCompletes()
        #expect(try world.db.read { try $0.scalar("SELECT body FROM messages WHERE id = 35", as: String.self) } == "edited")
        #expect(try world.db.read { try $0.scalar("SELECT count(*) FROM keep", as: Int.self) } == 2)
    }

    /// The same text compiled by Ferry (trusted) and sent by the app: the statement cache never
    /// hands the app Ferry's compiled statement.
    @Test func theAppNeverGetsFerrysCompiledStatements() throws {
        let world = try World()
        // Ferry's own write path runs exactly this statement (see `FerryConnection.runMoves`).
        try world.db.write { try $0.execute("UPDATE messages SET body = 'moved first' WHERE id = 20") }
        try world.expectDenied("DELETE FROM temp.ferry_move_rows", object: "ferry_move_rows")
        try world.expectDenied("DELETE FROM temp.ferry_redirect_suspended", object: "ferry_redirect_suspended")
        try world.expectMigrationCompletes()
    }

    /// The policy's decisions, request by request (no database): what is reserved and what is not.
    @Test func policyDecisions() {
        let policy = AccessPolicy(targetPath: "/nonexistent/app.db", sourcePaths: { [] })
        func denied(_ request: AuthorizerRequest, _ trust: StatementTrust = .untrusted) -> Bool {
            if case .deny = policy.decide(request, trust: trust) { return true }
            return false
        }
        // The app's own tables, even named like a ferry, are the app's.
        #expect(!denied(.init(action: .insert, first: "ferry_routes", schema: "main")))
        #expect(!denied(.init(action: .createTable, first: "ferry_routes", schema: "main")))
        #expect(!denied(.init(action: .delete, first: "ferry_quarantine_messages", schema: "main")))
        #expect(denied(.init(action: .insert, first: "ferry_migration_moved", schema: "main")))
        #expect(!denied(.init(action: .insert, first: "ferry_migration_moved", schema: "main", accessor: "ferry_redirect_insert_t")))
        #expect(denied(.init(action: .insert, first: "ferry_migration_moved", schema: "main", accessor: "app_trigger"), .trusted))
        #expect(!denied(.init(action: .insert, first: "ferry_migration_moved", schema: "main"), .trusted))
        #expect(denied(.init(action: .function, second: "sqlcipher_export"), .trusted))
        #expect(!denied(.init(action: .function, second: "lower")))
        #expect(!denied(.init(action: .pragma, first: "journal_mode", second: "wal")))
        #expect(denied(.init(action: .pragma, first: "Journal_Mode", second: "Delete")))
        #expect(!denied(.init(action: .pragma, first: "foreign_keys", second: "1")))
        #expect(!denied(.init(action: .attach, first: ":memory:")))
        #expect(!denied(.init(action: .attach, first: "")))
        #expect(denied(.init(action: .attach, first: nil)))
        #expect(denied(.init(action: .detach, first: "ferry_src_3")))
        #expect(!denied(.init(action: .detach, first: "mine")))
    }
}

/// Schema migrations run through `FerryDatabase.migrateSchema` are the app's statements too.
@Suite(.timeLimit(.minutes(2))) struct MigrationBodyAuthorizerTests {
    @Test func migrationBodiesCannotReachFerrysState() throws {
        let world = try AuthorizerTests.World()
        let before = try world.snapshot()
        var sql = SchemaMigrator()
        try sql.registerMigration("v1", sql: "CREATE TABLE extra(x); UPDATE ferry_migration_tables SET cursor = 1000")
        #expect { try world.db.migrateSchema(sql) } throws: { error in
            if case FerryError.accessDenied(let object, _, _) = error { return object.contains("ferry_migration_tables") }
            return false
        }
        var closure = SchemaMigrator()
        let schema = world.schema
        try closure.registerMigration("v1") { db in
            try db.execute("CREATE TABLE extra(x)")
            try db.execute("DELETE FROM \(schema).messages")
        }
        #expect { try world.db.migrateSchema(closure) } throws: { error in
            if case FerryError.accessDenied = error { return true }
            return false
        }
        // Rolled back: not even `extra` exists (the migrator's own bookkeeping table may).
        #expect(try world.snapshot().filter { !$0.contains("ferry_schema_migrations") } == before)
        // An ordinary migration still runs.
        var fine = SchemaMigrator()
        try fine.registerMigration("v1", sql: "CREATE TABLE extra(x); INSERT INTO extra VALUES (1)")
        try world.db.migrateSchema(fine)
        #expect(try world.db.read { try $0.scalar("SELECT count(*) FROM extra", as: Int.self) } == 1)
        try world.expectMigrationCompletes()
    }
}

/// Same-file migrations: the source table is in the target file, read-only while it migrates.
@Suite(.timeLimit(.minutes(2))) struct SameFileSourceAuthorizerTests {
    @Test func triggersOfTheAppCannotWriteASameFileSource() throws {
        let box = Sandbox()
        let target = box.path("app.db")
        try box.makeLegacy(rows: 40, name: "app.db", table: "old_messages")
        // A trigger from before the migration (creating one that names the source now is refused).
        try Connection(path: target).execute("CREATE TABLE keep(x); CREATE TRIGGER wipe AFTER INSERT ON keep BEGIN DELETE FROM old_messages; END")
        let db = try FerryDatabase(path: target, plan: MigrationPlan(sources: [MigrationSource(.targetFile, tables: [
            TableMapping(target: "messages", source: "old_messages"),
        ])]), options: .fixedBatches(of: 10))
        _ = try db.step()
        // Directly: the rewriter refuses; from a trigger of the app's: the authorizer.
        #expect(throws: FerryError.self) { try db.write { try $0.execute("DELETE FROM old_messages") } }
        #expect(throws: FerryError.self) { try db.write { try $0.execute("CREATE TRIGGER wipe2 AFTER INSERT ON keep BEGIN DELETE FROM old_messages; END") } }
        #expect { try db.write { try $0.execute("INSERT INTO keep VALUES (1)") } } throws: { error in
            if case FerryError.accessDenied(let object, _, _) = error { return object.contains("old_messages") }
            return false
        }
        try db.write { try $0.execute("DROP TRIGGER wipe") }
        try db.migrateAllBlocking()
        #expect(try db.read { try $0.fetchAll("SELECT id FROM messages ORDER BY id").map { try $0.get(0, as: Int.self) } } == Array(1...40))
    }
}
