import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// Every bad input of issue 8 gives a clear typed error and changes nothing: the target's schema
/// and rows, and every source file's bytes, are as before.
@Suite(.timeLimit(.minutes(2))) struct BadInputMatrixTests {
    /// A sandbox with a plain target holding one table, a plain source and (when the engine can
    /// encrypt) an encrypted one.
    final class World {
        let box = Sandbox()
        let target: String
        let plainSource: String
        let encryptedSource: String?
        static let key = Cipher.passphrase("bad-input-key")

        init() throws {
            target = box.path("app.db")
            try Connection(path: target).execute("""
                CREATE TABLE keep(x); INSERT INTO keep VALUES (1), (2);
                CREATE TABLE strict(id INTEGER PRIMARY KEY, conversation_id INTEGER, body TEXT, needed TEXT NOT NULL);
                """)
            plainSource = try box.makeLegacy(rows: 30)
            encryptedSource = SQLiteEngine.supportsEncryption ? try box.makeLegacy(rows: 30, name: "secret.db", cipher: Self.key) : nil
            try Data("this is not a database, just text that is long enough to look like a header......".utf8).write(to: URL(fileURLWithPath: box.path("text.db")))
            var garbage = [UInt8](repeating: 0, count: 8192)
            for i in garbage.indices { garbage[i] = UInt8((i * 7919) % 251) }
            try Data(garbage).write(to: URL(fileURLWithPath: box.path("garbage.db")))
            let truncated = try Data(contentsOf: URL(fileURLWithPath: plainSource)).prefix(1500)
            try truncated.write(to: URL(fileURLWithPath: box.path("truncated.db")))
            try Connection(path: box.path("view.db")).execute("CREATE TABLE m(id INTEGER PRIMARY KEY, body TEXT); CREATE VIEW messages AS SELECT * FROM m")
        }

        /// The target's schema and rows (logical: opening may switch it to WAL), and the bytes of
        /// every other file.
        func snapshot() throws -> [String] {
            var parts: [String] = []
            let db = try Connection(path: target)
            for row in try db.fetchAll("SELECT type, name, sql FROM sqlite_master ORDER BY name") { parts.append("\(row.values)") }
            for row in try db.fetchAll("SELECT x FROM keep ORDER BY x") { parts.append("\(row.values)") }
            db.close()
            for name in try FileManager.default.contentsOfDirectory(atPath: box.url.path).sorted()
            where !name.hasPrefix("app.db") && !name.hasSuffix("-wal") && !name.hasSuffix("-shm") && !name.hasSuffix("-ferry.lock") {
                // (`-ferry.lock`: the ownership lock file an open attempt creates and never deletes.)
                parts.append(name + ":" + (try Data(contentsOf: box.url.appendingPathComponent(name))).base64EncodedString())
            }
            return parts
        }

        func plan(_ file: String, cipher: Cipher? = nil, table: String = "messages", target: String = "messages", filter: String? = nil) -> MigrationPlan {
            MigrationPlan(sources: [MigrationSource(.file(file), cipher: cipher, tables: [TableMapping(target: target, source: table, filter: filter)])])
        }
    }

    /// Plans that must be refused at open, with the error they must give.
    @Test func badPlansAreRefusedAndChangeNothing() throws {
        let world = try World()
        var cases: [(String, MigrationPlan, (FerryError) -> Bool)] = [
            ("missing source file", world.plan(world.box.path("nope.db")), { if case .fileNotFound = $0 { true } else { false } }),
            ("text file", world.plan(world.box.path("text.db")), { if case .wrongKeyOrNotADatabase = $0 { true } else { false } }),
            ("garbage file", world.plan(world.box.path("garbage.db")), { if case .wrongKeyOrNotADatabase = $0 { true } else { false } }),
            ("truncated file", world.plan(world.box.path("truncated.db")), { _ in true }),
            ("missing source table", world.plan(world.plainSource, table: "nope"), { if case .noSuchTable = $0 { true } else { false } }),
            ("view as source", world.plan(world.box.path("view.db")), { if case .unsupported = $0 { true } else { false } }),
            ("target without the source's columns", world.plan(world.plainSource, target: "keep"), { if case .schemaMismatch = $0 { true } else { false } }),
            ("incompatible target", world.plan(world.plainSource, target: "strict"), { if case .schemaMismatch = $0 { true } else { false } }),
            ("filter syntax", world.plan(world.plainSource, filter: "id >"), { if case .invalidFilter = $0 { true } else { false } }),
            ("filter unknown column", world.plan(world.plainSource, filter: "nope = 1"), { if case .invalidFilter = $0 { true } else { false } }),
            ("filter injection", world.plan(world.plainSource, filter: "1); DROP TABLE keep; --"), { if case .invalidFilter = $0 { true } else { false } }),
            ("filter subquery", world.plan(world.plainSource, filter: "id IN (SELECT x FROM keep)"), { if case .invalidFilter = $0 { true } else { false } }),
            ("filter reading the clock", world.plan(world.plainSource, filter: "id < unixepoch()"), { if case .invalidFilter = $0 { true } else { false } }),
            ("random filter", world.plan(world.plainSource, filter: "random() % 2 = 0"), { if case .invalidFilter = $0 { true } else { false } }),
            ("exporting filter", world.plan(world.plainSource, filter: "load_extension('x') IS NULL"), { if case .invalidFilter = $0 { true } else { false } }),
            ("same target twice", MigrationPlan(sources: [MigrationSource(.file(world.plainSource), tables: [
                TableMapping(target: "m", source: "messages", filter: "id < 5"), TableMapping(target: "m", source: "messages"),
            ])]), { if case .invalidPlan = $0 { true } else { false } }),
        ]
        if let encrypted = world.encryptedSource {
            cases += [
                ("wrong key", world.plan(encrypted, cipher: .passphrase("wrong")), { if case .wrongKeyOrNotADatabase = $0 { true } else { false } }),
                ("no key for an encrypted file", world.plan(encrypted), { if case .wrongKeyOrNotADatabase = $0 { true } else { false } }),
                ("key for a plain file", world.plan(world.plainSource, cipher: World.key), { if case .wrongKeyOrNotADatabase = $0 { true } else { false } }),
            ]
        }
        let before = try world.snapshot()
        for (name, plan, expected) in cases {
            do {
                _ = try FerryDatabase(path: world.target, plan: plan)
                Issue.record("\(name): accepted")
            } catch {
                #expect(expected(error), "\(name): \(error)")
                #expect(!"\(error)".isEmpty)
            }
            #expect(try world.snapshot() == before, "\(name) changed something")
        }
        // A target that is not a database, and a wrong target key.
        for bad in ["text.db", "garbage.db"] {
            #expect(throws: FerryError.self, "\(bad)") { try FerryDatabase(path: world.box.path(bad)) }
        }
        if let encrypted = world.encryptedSource {
            #expect(throws: FerryError.wrongKeyOrNotADatabase(path: encrypted)) {
                try FerryDatabase(path: encrypted, configuration: .init(cipher: .passphrase("wrong")))
            }
        }
        #expect(try world.snapshot() == before)
    }

    /// Statements: unsupported on a migrating table, syntax errors, oversized and deeply nested
    /// SQL: typed errors, no crash, nothing changed.
    @Test func badStatementsAreRefusedAndChangeNothing() throws {
        let world = try World()
        let db = try FerryDatabase(path: world.target, plan: world.plan(world.plainSource))
        let rowsBefore = try db.read { try $0.fetchAll("SELECT * FROM messages ORDER BY id").map(\.values) }
        let deep = String(repeating: "(", count: 50_000) + "1" + String(repeating: ")", count: 50_000)
        let long = "SELECT " + Array(repeating: "1", count: 200_000).joined(separator: " + ") + " FROM messages"
        let statements = [
            "CREATE TEMP VIEW recent AS SELECT * FROM messages",
            "CREATE TRIGGER m_insert AFTER INSERT ON messages BEGIN SELECT CASE WHEN (SELECT count(*) FROM messages) > 1 THEN RAISE(ABORT, 'full') END; END",
            "SELECT * FROM messages INDEXED BY no_such_index",
            "SELECT rowid, * FROM messages NATURAL JOIN messages AS m",
            "UPDATE messages SET body = 'x' WHERE",
            "SELECT \(deep) FROM messages",
            "DELETE FROM messages WHERE id = \(deep)",
            long,
            // The app's connection may not reach Ferry's state, the sources, their files or keys.
            "DELETE FROM ferry_src_1.messages",
            "UPDATE ferry_migration_tables SET cursor = 1000",
            "INSERT INTO ferry_migration_moved VALUES ('messages', 3)",
            "DROP TABLE ferry_src_1.messages",
            "PRAGMA ferry_src_1.rekey = 'x'",
            "PRAGMA writable_schema = ON",
            "ATTACH '\(world.plainSource)' AS x",
            "SELECT load_extension('x')",
        ]
        for sql in statements {
            #expect(throws: FerryError.self, "\(sql.prefix(60))") { try db.write { try $0.execute(sql) } }
            #expect(throws: FerryError.self, "\(sql.prefix(60))") { try db.read { _ = try $0.fetchAll(sql) } }
        }
        #expect(try db.read { try $0.fetchAll("SELECT * FROM messages ORDER BY id").map(\.values) } == rowsBefore)
    }

    /// Text that is not valid UTF-8 moves byte for byte and reads without a crash.
    @Test func invalidUTF8ValuesMoveByteForByte() throws {
        let box = Sandbox()
        let legacy = box.path("legacy.db")
        try Connection(path: legacy).execute("""
            CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT);
            INSERT INTO t VALUES (1, CAST(x'ff80c0' AS TEXT)), (2, CAST(x'61ed' AS TEXT)), (3, 'ok');
            """)
        let db = try FerryDatabase(path: box.path("app.db"), plan: MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [TableMapping(target: "t", source: "t")])]))
        let hexBefore = try db.read { try $0.fetchAll("SELECT hex(body) FROM t ORDER BY id").map { try $0.get(0, as: String.self) } }
        #expect(hexBefore == ["FF80C0", "61ED", "6F6B"])
        let decoded = try db.read { try $0.fetchAll("SELECT body FROM t ORDER BY id").map { try $0.get(0, as: String.self) } }
        #expect(decoded.count == 3 && decoded[2] == "ok")
        try db.migrateAllBlocking()
        #expect(try db.read { try $0.fetchAll("SELECT hex(body), typeof(body) FROM t ORDER BY id").map(\.values) }
                == [["FF80C0", "text"], ["61ED", "text"], ["6F6B", "text"]])
    }
}
