import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// Online rebuilds carried out by `FerryRebuildExecutor`, and column feeds in data migrations.
@Suite(.timeLimit(.minutes(2))) struct OnlineRebuildTests {
    /// v1: `people` with ages stored as text, an index and an audit trigger.
    static func version1(rows: Int) -> SchemaMigrator {
        var migrator = SchemaMigrator()
        try! migrator.registerMigration("v1") { db in
            try db.execute("""
                CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT, age TEXT);
                CREATE INDEX people_by_name ON people(name);
                CREATE TABLE audit(person INTEGER, what TEXT);
                CREATE TRIGGER people_audit AFTER INSERT ON people BEGIN INSERT INTO audit VALUES (NEW.id, 'insert'); END;
                CREATE VIEW adults AS SELECT id, name FROM people WHERE age + 0 >= 18;
                """)
            try db.execute("""
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
                INSERT INTO people(id, name, age) SELECT x, 'person ' || x, CAST(x % 90 AS TEXT) FROM n
                """, [.integer(Int64(rows))])
        }
        return migrator
    }

    /// v2: ages become INTEGER NOT NULL with a CHECK, a column is added: an online rebuild.
    static func version2(rows: Int) -> SchemaMigrator {
        var migrator = version1(rows: rows)
        try! migrator.registerOnlineRebuild("v2", OnlineRebuild(
            table: "people",
            newDefinition: "id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER NOT NULL CHECK (age >= 0), nickname TEXT DEFAULT 'none'",
            columnMapping: [.init("id", from: "id"), .init("name", from: "name"), .init("age", from: "CAST(age AS INTEGER)")]))
        return migrator
    }

    @Test func rebuildGivesTheNewShapeAtOnceAndMovesRowsInTheBackground() throws {
        let directory = Sandbox()
        let path = directory.path("app.db")
        do {
            let db = try FerryDatabase(path: path)
            try db.migrateSchema(Self.version1(rows: 3000))
            let report = try db.migrateSchema(Self.version2(rows: 3000))
            #expect(report.applied.map(\.identifier) == ["v2"])

            // The new shape at once, with every row, values converted by the feed.
            let shape = try db.read { c in try c.fetchAll("SELECT typeof(age), count(*) FROM people GROUP BY 1").map(\.values) }
            #expect(shape == [["integer", 3000]])
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM people WHERE nickname = 'none'", as: Int.self) } == 3000)
            #expect(try db.read { try $0.scalar("SELECT sum(age) FROM people", as: Int.self) } == (1...3000).reduce(0) { $0 + $1 % 90 })
            #expect(try db.isMigrated == false)
            // The view still names `people`, now the new shape, and sees every row.
            let adults = (1...3000).filter { $0 % 90 >= 18 }.count
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM adults", as: Int.self) } == adults)

            // Writes see a finished table: an update of an unmoved row, a new row (the trigger was
            // re-created on the new shape), and the new CHECK.
            try db.write { c in
                try c.execute("UPDATE people SET nickname = 'p7' WHERE id = 2999")
                try c.execute("INSERT INTO people(name, age) VALUES ('newcomer', 20)")
                #expect(c.lastInsertRowid == 3001)
            }
            #expect(throws: FerryError.self) { try db.write { try $0.execute("INSERT INTO people(name, age) VALUES ('bad', -1)") } }
            #expect(try db.read { try $0.scalar("SELECT nickname FROM people WHERE id = 2999", as: String.self) } == "p7")
            // The audit trigger was re-created on the new shape and fired for the app's insert.
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM audit WHERE person = 3001", as: Int.self) } == 1)

            // Steps move the rest; the old table is dropped.
            try db.migrateAllBlocking()
            #expect(try db.isMigrated)
        }
        let raw = try Connection(path: path)
        #expect(try raw.scalar("SELECT count(*) FROM people", as: Int.self) == 3001)
        #expect(try raw.scalar("SELECT count(*) FROM people WHERE typeof(age) <> 'integer'", as: Int.self) == 0)
        #expect(try raw.scalar("SELECT count(*) FROM sqlite_master WHERE name LIKE 'ferry_rebuild_%'", as: Int.self) == 0)
        let indexes = try raw.fetchAll("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'people'").map { try $0.get(0, as: String.self) }
        #expect(indexes == ["people_by_name"])
        #expect(try raw.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'people'", as: Int.self) == 1)
        #expect(try raw.scalar("PRAGMA integrity_check", as: String.self) == "ok")
        #expect(try raw.scalar("SELECT count(*) FROM adults", as: Int.self) == (1...3000).filter { $0 % 90 >= 18 }.count + 1)
    }

    /// A fresh install (v2 applied on an empty table) and an upgrade end with the same schema;
    /// running the migrator again is a no-op.
    @Test func freshInstallAndUpgradeEndWithTheSameSchema() throws {
        let directory = Sandbox()
        let upgraded = try FerryDatabase(path: directory.path("upgraded.db"))
        try upgraded.migrateSchema(Self.version1(rows: 50))
        try upgraded.migrateSchema(Self.version2(rows: 50))
        try upgraded.migrateAllBlocking()
        let fresh = try FerryDatabase(path: directory.path("fresh.db"))
        try fresh.migrateSchema(Self.version2(rows: 0))
        try fresh.migrateAllBlocking()
        let schema = { (db: FerryDatabase) in try db.pool.read { try SchemaSnapshot($0) } }
        #expect(try schema(upgraded) == schema(fresh))
        #expect(try upgraded.migrateSchema(Self.version2(rows: 50)).applied.isEmpty)
    }

    /// A row the new shape refuses fails its batch with the constraint's error (the table is
    /// `failed`, auto-migration stops after its retries); reads keep working and show the row as
    /// its feed computes it. The remedy is a feed that satisfies the new constraints.
    @Test func rowsViolatingTheNewShapeFailTheirBatchLoudly() throws {
        let directory = Sandbox()
        let db = try FerryDatabase(path: directory.path("app.db"))
        var migrator = SchemaMigrator()
        try migrator.registerMigration("v1") { db in
            try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('1'), ('2'), (NULL), ('4')")
        }
        try migrator.registerOnlineRebuild("v2", OnlineRebuild(table: "t", newDefinition: "id INTEGER PRIMARY KEY, v INTEGER NOT NULL",
                                                               columnMapping: [.init("v", from: "CAST(v AS INTEGER)")]))
        try db.migrateSchema(migrator)
        #expect(throws: FerryError.self) { try db.migrateAllBlocking() }
        let table = try #require(try db.progress().tables.first)
        #expect(table.state == .failed)
        #expect("\(String(describing: table.lastError))".contains("NOT NULL constraint failed"))
        #expect(try db.read { try $0.fetchAll("SELECT v FROM t ORDER BY id").map(\.values) } == [[1], [2], [.null], [4]])

        // The same rebuild with a feed that satisfies the constraint completes.
        let fixed = try FerryDatabase(path: directory.path("fixed.db"))
        var remedy = SchemaMigrator()
        try remedy.registerMigration("v1") { db in
            try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('1'), ('2'), (NULL), ('4')")
        }
        try remedy.registerOnlineRebuild("v2", OnlineRebuild(table: "t", newDefinition: "id INTEGER PRIMARY KEY, v INTEGER NOT NULL",
                                                             columnMapping: [.init("v", from: "ifnull(CAST(v AS INTEGER), 0)")]))
        try fixed.migrateSchema(remedy)
        try fixed.migrateAllBlocking()
        #expect(try fixed.read { try $0.fetchAll("SELECT v FROM t ORDER BY id").map { try $0.get(0, as: Int.self) } } == [1, 2, 0, 4])
    }

    /// Refusals: a table other tables reference, an index that does not fit the new shape, a
    /// definition that does not compile. Each rolls the migration back and changes nothing.
    @Test func refusedRebuildsChangeNothing() throws {
        let directory = Sandbox()
        let db = try FerryDatabase(path: directory.path("app.db"))
        var base = SchemaMigrator()
        try base.registerMigration("v1") { db in
            try db.execute("""
                CREATE TABLE parent(id INTEGER PRIMARY KEY, name TEXT);
                CREATE TABLE child(id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id));
                CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b TEXT);
                CREATE INDEX t_by_b ON t(b);
                INSERT INTO parent VALUES (1, 'p'); INSERT INTO child VALUES (1, 1); INSERT INTO t VALUES (1, 'a', 'b');
                """)
        }
        try db.migrateSchema(base)
        let before = try db.pool.read { try SchemaSnapshot($0) }
        let cases: [(OnlineRebuild, String)] = [
            (OnlineRebuild(table: "parent", newDefinition: "id INTEGER PRIMARY KEY, name TEXT NOT NULL", columnMapping: []), "referenced by foreign keys"),
            (OnlineRebuild(table: "t", newDefinition: "id INTEGER PRIMARY KEY, a TEXT", columnMapping: []), "t_by_b"),
            (OnlineRebuild(table: "t", newDefinition: "id INTEGER PRIMARY KEY, a TEXT,", columnMapping: []), "does not compile"),
            (OnlineRebuild(table: "t", newDefinition: "id INTEGER PRIMARY KEY, a TEXT, b TEXT",
                           columnMapping: [.init("a", from: "no_such_column")]), "no_such_column"),
            (OnlineRebuild(table: "missing", newDefinition: "id INTEGER PRIMARY KEY", columnMapping: []), "missing"),
        ]
        for (rebuild, expected) in cases {
            var migrator = base
            try migrator.registerOnlineRebuild("v2", rebuild)
            do {
                try db.migrateSchema(migrator)
                Issue.record("rebuild of \(rebuild.table) was not refused")
            } catch {
                #expect("\(error)".contains(expected), "\(error)")
            }
            #expect(try db.pool.read { try SchemaSnapshot($0) } == before)
            #expect(try db.progress().tables.isEmpty)
        }
    }

    /// Column feeds in a plain data migration: a renamed column and a computed one, across files.
    @Test func columnFeedsRenameAndComputeAcrossFiles() throws {
        let box = Sandbox()
        let legacy = box.path("legacy.db")
        try Connection(path: legacy).execute("""
            CREATE TABLE users(id INTEGER PRIMARY KEY, first TEXT, last TEXT, email TEXT UNIQUE);
            INSERT INTO users VALUES (1, 'Ada', 'Lovelace', 'ada@x'), (2, 'Alan', 'Turing', 'alan@x'), (3, 'Grace', 'Hopper', 'grace@x');
            """)
        let app = box.path("app.db")
        try Connection(path: app).execute("CREATE TABLE people(id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, mail TEXT UNIQUE)")
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [
            TableMapping(target: "people", source: "users",
                         columns: [.init("full_name", from: "first || ' ' || last"), .init("mail", from: "email")]),
        ])])
        let db = try FerryDatabase(path: app, plan: plan)
        #expect(try db.read { try $0.scalar("SELECT full_name FROM people WHERE mail = 'alan@x'", as: String.self) } == "Alan Turing")
        // `mail` copies a source column: its UNIQUE key is enforced against unmoved rows at once.
        #expect(throws: FerryError.self) { try db.write { try $0.execute("INSERT INTO people(full_name, mail) VALUES ('X', 'grace@x')") } }
        try db.migrateAllBlocking()
        let rows = try db.read { try $0.fetchAll("SELECT id, full_name, mail FROM people ORDER BY id").map(\.values) }
        #expect(rows == [[1, "Ada Lovelace", "ada@x"], [2, "Alan Turing", "alan@x"], [3, "Grace Hopper", "grace@x"]])
        #expect(try db.verify().tables.allSatisfy { $0.rowsDiffering == 0 })
        // Registering again with other feeds is a conflict.
        let changed = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [
            TableMapping(target: "people", source: "users", columns: [.init("full_name", from: "last")]),
        ])])
        #expect(throws: FerryError.self) { try db.register(changed) }
    }

    /// A rebuild that leaves an old column behind must say so; then it runs.
    @Test func droppedColumnsMustBeDeclared() throws {
        let directory = Sandbox()
        let db = try FerryDatabase(path: directory.path("app.db"))
        var base = SchemaMigrator()
        try base.registerMigration("v1") { db in
            try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, keep TEXT, legacy_flag INTEGER); INSERT INTO t VALUES (1, 'a', 0), (2, 'b', 1)")
        }
        try db.migrateSchema(base)
        var silent = base
        try silent.registerOnlineRebuild("v2", OnlineRebuild(table: "t", newDefinition: "id INTEGER PRIMARY KEY, keep TEXT NOT NULL", columnMapping: []))
        #expect { try db.migrateSchema(silent) } throws: { "\($0)".contains("legacy_flag") }
        var declared = base
        try declared.registerOnlineRebuild("v2", OnlineRebuild(table: "t", newDefinition: "id INTEGER PRIMARY KEY, keep TEXT NOT NULL",
                                                               columnMapping: [], droppedColumns: ["legacy_flag"]))
        try db.migrateSchema(declared)
        try db.migrateAllBlocking()
        #expect(try db.read { try $0.fetchAll("SELECT * FROM t ORDER BY id").map(\.values) } == [[1, "a"], [2, "b"]])
    }

    /// Feeds are validated like filters and against both tables.
    @Test func invalidFeedsAreRefused() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 10)
        let app = box.path("app.db")
        try Connection(path: app).execute("CREATE TABLE m(id INTEGER PRIMARY KEY, body TEXT, n INTEGER)")
        let bad: [[ColumnFeed]] = [
            [.init("body", from: "body); DROP TABLE m; --")],
            [.init("body", from: "(SELECT 1)")],
            [.init("nope", from: "body")],
            [.init("body", from: "missing_column")],
            [.init("id", from: "conversation_id")],
            [.init("n", from: "1"), .init("N", from: "2")],
        ]
        for feeds in bad {
            let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [TableMapping(target: "m", source: "messages", columns: feeds)])])
            #expect(throws: FerryError.self, "\(feeds)") { try FerryDatabase(path: app, plan: plan) }
        }
        #expect(try Connection(path: app).scalar("SELECT count(*) FROM m", as: Int.self) == 0)
    }
}
