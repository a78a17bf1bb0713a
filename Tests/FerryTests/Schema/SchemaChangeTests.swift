import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// The development reset: `hasSchemaChanges`, `eraseDatabaseOnSchemaChange`, `eraseDatabase`.
@Suite(.timeLimit(.minutes(2))) struct SchemaChangeTests {
    static func playerMigrators() throws -> (SchemaMigrator, SchemaMigrator) {
        var migrator1 = SchemaMigrator()
        try migrator1.registerMigration("1") { db in
            try db.execute("CREATE TABLE player(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT)")
        }
        var migrator2 = SchemaMigrator()
        try migrator2.registerMigration("1") { db in
            // Schema change, because reasons (development).
            try db.execute("CREATE TABLE player(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, score INTEGER)")
        }
        try migrator2.registerMigration("2", sql: "INSERT INTO player (id, name, score) VALUES (NULL, 'Arthur', 1000)")
        return (migrator1, migrator2)
    }

    static func expectNoScoreColumn(_ body: () throws -> Void) {
        #expect { try body() } throws: { error in
            guard case .sqlite(let code, let message, _) = error as? FerryError else { return false }
            return code == .error && message == "table player has no column named score"
        }
    }

    // testEraseDatabaseOnSchemaChange
    @Test(arguments: Target.allCases) func eraseDatabaseOnSchemaChange(target: Target) throws {
        var (migrator1, migrator2) = try Self.playerMigrators()
        let db = try TestDatabase(target)
        try db.migrate(migrator1)
        Self.expectNoScoreColumn { try db.migrate(migrator2) }
        #expect(try db.read { try migrator2.appliedMigrations($0) } == ["1"])

        migrator2.eraseDatabaseOnSchemaChange = true
        #expect(try db.read { try migrator2.hasSchemaChanges($0) })
        let report = try db.migrate(migrator2)
        #expect(report.erasedDatabase)
        #expect(report.appliedIdentifiers == ["1", "2"])
        #expect(try db.read { try migrator2.hasSchemaChanges($0) } == false)
        #expect(try db.read { try migrator2.appliedMigrations($0) } == ["1", "2"])
        #expect(try db.read { try $0.scalar("SELECT score FROM player", as: Int.self) } == 1000)
        _ = migrator1
    }

    // testManualEraseDatabaseOnSchemaChange
    @Test func manualEraseDatabaseOnSchemaChange() throws {
        let (migrator1, migrator2) = try Self.playerMigrators()
        let dir = Sandbox()
        let pool = try DatabasePool(path: dir.path("db.sqlite"))
        try migrator1.migrate(pool)
        Self.expectNoScoreColumn { try migrator2.migrate(pool) }
        if try pool.read(migrator2.hasSchemaChanges) {
            try pool.writeWithoutTransaction { try $0.eraseDatabase() }
        }
        try migrator2.migrate(pool)
        #expect(try pool.read(migrator2.hasSchemaChanges) == false)
        #expect(try pool.read(migrator2.appliedMigrations) == ["1", "2"])
    }

    // testHasSchemaChangesWorksWithReadonlyConfig
    @Test func hasSchemaChangesWorksOnReadOnlyConnections() throws {
        let (migrator1, migrator2) = try Self.playerMigrators()
        let dir = Sandbox()
        let path = dir.path("db.sqlite")
        do {
            let db = try Connection(path: path)
            #expect(try !migrator1.hasSchemaChanges(db))
            try migrator1.migrate(db)
            #expect(try !migrator1.hasSchemaChanges(db))
        }
        let readOnly = try Connection(path: path, configuration: .init(readOnly: true))
        #expect(try !migrator1.hasSchemaChanges(readOnly))
        #expect(try migrator2.hasSchemaChanges(readOnly))
    }

    // testEraseDatabaseOnSchemaChangeWithConfiguration: the scratch database gets the connection's
    // configuration (here `prepareStatements` that a migration depends on).
    @Test func scratchDatabaseUsesTheConnectionConfiguration() throws {
        let configuration = Connection.Configuration(prepareStatements: [
            "CREATE TEMP TABLE IF NOT EXISTS defaults(name TEXT)",
            "INSERT INTO temp.defaults VALUES ('Arthur')",
        ])
        var migrator1 = SchemaMigrator()
        try migrator1.registerMigration("1", sql: """
            CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT);
            INSERT INTO player(name) SELECT name FROM temp.defaults;
            """)
        var migrator2 = SchemaMigrator()
        try migrator2.registerMigration("1", sql: """
            CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT, score INTEGER);
            INSERT INTO player(name, score) SELECT name, 1000 FROM temp.defaults;
            """)
        try migrator2.registerMigration("2", sql: "INSERT INTO player(name, score) SELECT name, 2000 FROM temp.defaults")
        let dir = Sandbox()
        let db = try Connection(path: dir.path("db.sqlite"), configuration: configuration)
        try migrator1.migrate(db)
        // The edited migration is caught by its checksum first.
        #expect(throws: FerryError.shippedMigrationChanged(id: "1")) { try migrator2.migrate(db) }
        migrator2.eraseDatabaseOnSchemaChange = true
        #expect(try migrator2.hasSchemaChanges(db))
        try migrator2.migrate(db)
        #expect(try !migrator2.hasSchemaChanges(db))
        #expect(try migrator2.appliedMigrations(db) == ["1", "2"])
        #expect(try db.fetchAll("SELECT name, score FROM player ORDER BY id").map { "\($0[0]) \($0[1])" } == ["'Arthur' 1000", "'Arthur' 2000"])
    }

    // testEraseDatabaseOnSchemaChangeDoesNotEraseDatabaseOnAddedMigration
    @Test(arguments: Target.allCases) func addedMigrationDoesNotErase(target: Target) throws {
        var migrator = SchemaMigrator()
        migrator.eraseDatabaseOnSchemaChange = true
        try migrator.registerMigration("1", sql: "CREATE TABLE t1(id INTEGER PRIMARY KEY); INSERT INTO t1(id) VALUES (1)")
        let db = try TestDatabase(target)
        try db.migrate(migrator)
        try db.write { try $0.execute("INSERT INTO t1(id) VALUES (2)") }
        try migrator.registerMigration("2", sql: "CREATE TABLE t2(id INTEGER PRIMARY KEY)")
        #expect(try db.read { try migrator.hasSchemaChanges($0) } == false)
        #expect(try !db.migrate(migrator).erasedDatabase)
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM t1", as: Int.self) } == 2)
        #expect(try db.tableExists("t2"))
    }

    // testEraseDatabaseOnSchemaChangeIgnoresInternalSchemaObjects
    @Test func internalSchemaObjectsAreIgnored() throws {
        var migrator = SchemaMigrator()
        migrator.eraseDatabaseOnSchemaChange = true
        try migrator.registerMigration("1", sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT UNIQUE)")
        let db = try Connection.inMemory()
        try migrator.migrate(db)
        try db.execute("INSERT INTO t DEFAULT VALUES; ANALYZE;")
        #expect(try db.tableExists("sqlite_stat1"))
        #expect(try !migrator.hasSchemaChanges(db))
        #expect(try !migrator.migrate(db).erasedDatabase)
        #expect(try db.scalar("SELECT id FROM t", as: Int.self) == 1)
    }

    // testEraseDatabaseOnSchemaChangeWithRenamedMigration
    @Test func renamedMigrationErases() throws {
        let db = try Connection.inMemory()
        var migrator1 = SchemaMigrator()
        try migrator1.registerMigration("1", sql: "CREATE TABLE t1(id INTEGER PRIMARY KEY); INSERT INTO t1(id) VALUES (1)")
        try migrator1.migrate(db)
        var migrator2 = SchemaMigrator()
        migrator2.eraseDatabaseOnSchemaChange = true
        try migrator2.registerMigration("2", sql: "CREATE TABLE t1(id INTEGER PRIMARY KEY); INSERT INTO t1(id) VALUES (2)")
        #expect(try migrator2.hasSchemaChanges(db))
        #expect(try migrator2.migrate(db).erasedDatabase)
        #expect(try !migrator2.hasSchemaChanges(db))
        #expect(try db.scalar("SELECT id FROM t1", as: Int.self) == 2)
    }

    // Whitespace and comments are not changes (GRDB compares raw text; Ferry normalizes).
    @Test func whitespaceAndCommentsAreNotChanges() throws {
        var migrator1 = SchemaMigrator()
        try migrator1.registerMigration("1", sql: "CREATE TABLE t(a INTEGER, b TEXT)")
        var migrator2 = SchemaMigrator()
        migrator2.eraseDatabaseOnSchemaChange = true
        try migrator2.registerMigration("1", sql: """
            -- the t table
            CREATE TABLE t (
                a INTEGER, /* key */
                b TEXT
            );
            """)
        let db = try Connection.inMemory()
        try migrator1.migrate(db)
        try db.execute("INSERT INTO t VALUES (1, 'x')")
        #expect(try migrator2.changedMigrations(db) == [])
        #expect(try !migrator2.hasSchemaChanges(db))
        #expect(try !migrator2.migrate(db).erasedDatabase)
        #expect(try db.scalar("SELECT count(*) FROM t", as: Int.self) == 1)
    }

    // A schema edited outside the migrations (or by an unchecked closure that changed) is detected
    // by the replay even when no checksum can tell.
    @Test func schemaDriftIsDetectedByReplay() throws {
        var migrator = SchemaMigrator()
        try migrator.registerMigration("1") { db in try db.execute("CREATE TABLE t(a)") }
        let db = try Connection.inMemory()
        try migrator.migrate(db)
        #expect(try !migrator.hasSchemaChanges(db))
        try db.execute("CREATE INDEX t_a ON t(a)")
        #expect(try migrator.hasSchemaChanges(db))
    }

    @Test func eraseDatabaseRemovesEverything() throws {
        let db = try Connection.inMemory()
        try db.execute("""
            CREATE TABLE parent(id INTEGER PRIMARY KEY AUTOINCREMENT);
            CREATE TABLE child(parentId INTEGER REFERENCES parent(id) ON DELETE CASCADE);
            CREATE INDEX child_parent ON child(parentId);
            CREATE VIEW v AS SELECT * FROM child;
            CREATE TRIGGER tr AFTER INSERT ON parent BEGIN INSERT INTO child VALUES (new.id); END;
            CREATE VIRTUAL TABLE search USING fts5(body);
            INSERT INTO parent DEFAULT VALUES;
            INSERT INTO search VALUES ('hello');
            ANALYZE;
            PRAGMA user_version = 7;
            """)
        try db.eraseDatabase()
        #expect(try db.scalar("SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'", as: Int.self) == 0)
        #expect(try db.scalar("PRAGMA user_version", as: Int.self) == 0)
        #expect(try db.scalar("PRAGMA foreign_keys", as: Int.self) == 1)
        // AUTOINCREMENT starts over.
        try db.execute("CREATE TABLE parent(id INTEGER PRIMARY KEY AUTOINCREMENT); INSERT INTO parent DEFAULT VALUES")
        #expect(try db.scalar("SELECT id FROM parent", as: Int.self) == 1)
        _ = try db.transaction {
            #expect(throws: (any Error).self) { try db.eraseDatabase() }
        }
    }

    // Development reset on an encrypted database (the scratch database is encrypted with the same
    // cipher; erase drops objects one by one, as the backup API cannot cross keys).
    @Test(.enabled(if: SQLiteEngine.supportsEncryption))
    func eraseOnSchemaChangeWithEncryptedDatabase() throws {
        let cipher = try Cipher.rawKey(Array(repeating: 7, count: 32))
        let configuration = Connection.Configuration(cipher: cipher)
        let (migrator1, migrator2Base) = try Self.playerMigrators()
        var migrator2 = migrator2Base
        migrator2.eraseDatabaseOnSchemaChange = true
        let dir = Sandbox()
        let path = dir.path("encrypted.sqlite")
        do {
            let pool = try DatabasePool(path: path, configuration: configuration)
            try migrator1.migrate(pool)
            #expect(try pool.read(migrator2.hasSchemaChanges))
            #expect(try migrator2.migrate(pool).erasedDatabase)
            #expect(try pool.read(migrator2.appliedMigrations) == ["1", "2"])
        }
        // Still encrypted with the same key, readable, migrated.
        let header = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(16)
        #expect(header != Data("SQLite format 3\0".utf8))
        #expect(throws: SQLiteError.wrongKeyOrNotADatabase(path: path)) { try Connection(path: path) }
        let db = try Connection(path: path, configuration: configuration)
        #expect(try db.scalar("SELECT score FROM player", as: Int.self) == 1000)
        #expect(try !migrator2.hasSchemaChanges(db))
    }
}
