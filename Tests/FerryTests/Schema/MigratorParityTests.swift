import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// Ports of the behaviour GRDB's `DatabaseMigratorTests` assert (peers.md §1.9), all on Linux.
@Suite(.timeLimit(.minutes(2))) struct MigratorParityTests {
    // testMigrateAnyDatabaseWriter: migrate accepts a connection and a pool (compile-time).
    @Test func migrateAcceptsConnectionsAndPools() throws {
        let migrator = SchemaMigrator()
        func compiles(_ db: Connection, _ pool: DatabasePool) throws {
            try migrator.migrate(db)
            try migrator.migrate(pool)
        }
        _ = compiles
    }

    // testEmptyMigratorSync
    @Test(arguments: Target.allCases) func emptyMigratorSync(target: Target) throws {
        let db = try TestDatabase(target)
        let report = try db.migrate(SchemaMigrator())
        #expect(report.applied.isEmpty)
    }

    // testEmptyMigratorAsync: the async form succeeds and gives write access afterwards.
    @Test func emptyMigratorAsync() async throws {
        let dir = Sandbox()
        let pool = try DatabasePool(path: dir.path("db.sqlite"))
        let report = try await SchemaMigrator().migrate(pool)
        #expect(report.applied.isEmpty)
        try await pool.write { db in try db.execute("CREATE TABLE t(a)") }
    }

    static func nonEmptyMigrators() throws -> (SchemaMigrator, SchemaMigrator) {
        var migrator = SchemaMigrator()
        try migrator.registerMigration("createPersons", sql: """
            CREATE TABLE persons (id INTEGER PRIMARY KEY, name TEXT, birthYear INT);
            """)
        try migrator.registerMigration("createPets", sql: """
            CREATE TABLE pets (
                id INTEGER PRIMARY KEY,
                masterID INTEGER NOT NULL REFERENCES persons(id) ON DELETE CASCADE ON UPDATE CASCADE,
                name TEXT);
            """)
        var migrator2 = migrator
        try migrator2.registerMigration("destroyPersons", allowing: [.allow(.dropTableWithRows, because: "test")], sql: "DROP TABLE pets")
        return (migrator, migrator2)
    }

    // testNonEmptyMigratorSync: tables created; a derived migrator applies only its new migration.
    @Test(arguments: Target.allCases) func nonEmptyMigratorSync(target: Target) throws {
        let (migrator, migrator2) = try Self.nonEmptyMigrators()
        let db = try TestDatabase(target)
        #expect(try db.migrate(migrator).appliedIdentifiers == ["createPersons", "createPets"])
        #expect(try db.tableExists("persons"))
        #expect(try db.tableExists("pets"))

        #expect(try db.migrate(migrator2).appliedIdentifiers == ["destroyPersons"])
        #expect(try db.tableExists("persons"))
        #expect(try !db.tableExists("pets"))
    }

    // testNonEmptyMigratorAsync
    @Test func nonEmptyMigratorAsync() async throws {
        let (migrator, migrator2) = try Self.nonEmptyMigrators()
        let dir = Sandbox()
        let pool = try DatabasePool(path: dir.path("db.sqlite"))
        #expect(try await migrator.migrate(pool).appliedIdentifiers == ["createPersons", "createPets"])
        #expect(try await pool.read { try $0.tableExists("persons") && $0.tableExists("pets") })
        #expect(try await migrator2.migrate(pool).appliedIdentifiers == ["destroyPersons"])
        #expect(try await pool.read { try $0.tableExists("persons") && !$0.tableExists("pets") })
        #expect(try await pool.read { try migrator2.appliedMigrations($0) } == ["createPersons", "createPets", "destroyPersons"])
    }

    // testMigrateUpTo: one step, zero step, two steps, zero step; unknown target and a target behind
    // the database throw typed errors (GRDB crashes).
    @Test(arguments: Target.allCases) func migrateUpTo(target: Target) throws {
        var migrator = SchemaMigrator()
        try migrator.registerMigration("a", sql: "CREATE TABLE a (id INTEGER PRIMARY KEY)")
        try migrator.registerMigration("b", sql: "CREATE TABLE b (id INTEGER PRIMARY KEY)")
        try migrator.registerMigration("c", sql: "CREATE TABLE c (id INTEGER PRIMARY KEY)")
        let db = try TestDatabase(target)

        #expect(try db.migrate(migrator, upTo: "a").appliedIdentifiers == ["a"])
        #expect(try db.tableExists("a") && !db.tableExists("b"))

        #expect(try db.migrate(migrator, upTo: "a").applied.isEmpty)
        #expect(try db.tableExists("a") && !db.tableExists("b"))

        #expect(try db.migrate(migrator, upTo: "c").appliedIdentifiers == ["b", "c"])
        #expect(try db.tableExists("a") && db.tableExists("b") && db.tableExists("c"))

        #expect(try db.migrate(migrator, upTo: "c").applied.isEmpty)
        #expect(try db.migrate(migrator).applied.isEmpty)

        #expect(throws: FerryError.unknownMigration(id: "missing")) { try db.migrate(migrator, upTo: "missing") }
        #expect(throws: FerryError.databaseBeyondMigration(target: "b", lastApplied: "c")) { try db.migrate(migrator, upTo: "b") }
    }

    static let foreignKeyFailureMigrator: SchemaMigrator = {
        var migrator = SchemaMigrator()
        try! migrator.registerMigration("createPersons", sql: """
            CREATE TABLE persons (id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE pets (masterId INTEGER NOT NULL REFERENCES persons(id), name TEXT);
            INSERT INTO persons (name) VALUES ('Arthur');
            """)
        try! migrator.registerMigration("foreignKeyError", sql: """
            INSERT INTO persons (name) VALUES ('Barbara');
            INSERT INTO pets (masterId, name) VALUES (123, 'Bobby');
            """)
        return migrator
    }()

    static let expectedViolation = FerryError.foreignKeyViolation(
        table: "pets", columns: ["masterId"], parentTable: "persons", parentColumns: ["id"],
        row: "rowid 1 [masterId:123 name:'Bobby']")

    // testMigrationFailureTriggersRollback (sync): the first migration is committed, the second is
    // rolled back, and the error names table, columns, parent and row.
    @Test(arguments: Target.allCases) func migrationFailureTriggersRollback(target: Target) throws {
        let db = try TestDatabase(target)
        #expect(throws: Self.expectedViolation) { try db.migrate(Self.foreignKeyFailureMigrator) }
        #expect(try db.read { try strings($0, "SELECT name FROM persons") } == ["Arthur"])
        #expect(try db.read { try Self.foreignKeyFailureMigrator.appliedMigrations($0) } == ["createPersons"])
        #expect(Self.expectedViolation.description
            == "FOREIGN KEY constraint violation - from pets(masterId) to persons(id), in rowid 1 [masterId:123 name:'Bobby']")
        // Foreign keys are back on after the failed migration.
        #expect(try db.read { try $0.scalar("PRAGMA foreign_keys", as: Int.self) } == 1)
    }

    // testMigrationFailureTriggersRollback (async)
    @Test func migrationFailureTriggersRollbackAsync() async throws {
        let dir = Sandbox()
        let pool = try DatabasePool(path: dir.path("db.sqlite"))
        await #expect(throws: Self.expectedViolation) { try await Self.foreignKeyFailureMigrator.migrate(pool) }
        #expect(try await pool.read { try strings($0, "SELECT name FROM persons") } == ["Arthur"])
    }

    // testForeignKeyViolation: a 12-step table rebuild inside a migration works; a later violation
    // rolls back only that migration.
    @Test(arguments: Target.allCases) func foreignKeyViolationAfterRebuild(target: Target) throws {
        var migrator = SchemaMigrator()
        try migrator.registerMigration("createPersons", sql: """
            CREATE TABLE persons (id INTEGER PRIMARY KEY, name TEXT, tmp TEXT);
            CREATE TABLE pets (masterId INTEGER NOT NULL REFERENCES persons(id), name TEXT);
            INSERT INTO persons (name) VALUES ('Arthur');
            INSERT INTO pets (masterId, name) VALUES (last_insert_rowid(), 'Bobby');
            """)
        try migrator.registerMigration(
            "removePersonTmpColumn",
            allowing: [.allow(.rebuildDropsData, because: "tmp never held data"),
                       .allow(.dropTableWithRows, because: "rows are copied to new_persons first")],
            sql: """
                CREATE TABLE new_persons (id INTEGER PRIMARY KEY, name TEXT);
                INSERT INTO new_persons SELECT id, name FROM persons;
                DROP TABLE persons;
                ALTER TABLE new_persons RENAME TO persons;
                """)
        try migrator.registerMigration("foreignKeyError", sql: """
            INSERT INTO persons (name) VALUES ('Barbara');
            INSERT INTO pets (masterId, name) VALUES (123, 'Bobby');
            """)
        let db = try TestDatabase(target)
        #expect(throws: FerryError.foreignKeyViolation(
            table: "pets", columns: ["masterId"], parentTable: "persons", parentColumns: ["id"],
            row: "rowid 2 [masterId:123 name:'Bobby']")) { try db.migrate(migrator) }
        try db.read { db in
            let persons = try db.fetchAll("SELECT * FROM persons")
            #expect(persons.count == 1)
            #expect(persons.first?.columnNames == ["id", "name"])
            #expect(try persons.first?.get("name", as: String.self) == "Arthur")
            #expect(try strings(db, "SELECT name FROM pets") == ["Bobby"])
        }
    }

    // testAppliedMigrations
    @Test func appliedMigrations() throws {
        var migrator = SchemaMigrator()
        do {
            let db = try Connection.inMemory()
            #expect(try migrator.appliedMigrations(db) == [])
        }
        try migrator.registerMigration("1", sql: "")
        do {
            let db = try Connection.inMemory()
            #expect(try migrator.appliedMigrations(db) == [])
            try migrator.migrate(db, upTo: "1")
            #expect(try migrator.appliedMigrations(db) == ["1"])
        }
        try migrator.registerMigration("2", sql: "")
        do {
            let db = try Connection.inMemory()
            #expect(try migrator.appliedMigrations(db) == [])
            try migrator.migrate(db, upTo: "1")
            #expect(try migrator.appliedMigrations(db) == ["1"])
            try migrator.migrate(db, upTo: "2")
            #expect(try migrator.appliedMigrations(db) == ["1", "2"])
        }
    }

    // testCompletedMigrations
    @Test func completedMigrations() throws {
        var migrator = SchemaMigrator()
        do {
            let db = try Connection.inMemory()
            #expect(try migrator.completedMigrations(db) == [])
            #expect(try migrator.hasCompletedMigrations(db))
        }
        try migrator.registerMigration("1", sql: "")
        do {
            let db = try Connection.inMemory()
            #expect(try migrator.completedMigrations(db) == [])
            #expect(try !migrator.hasCompletedMigrations(db))
            try migrator.migrate(db, upTo: "1")
            #expect(try migrator.completedMigrations(db) == ["1"])
            #expect(try migrator.hasCompletedMigrations(db))
        }
        try migrator.registerMigration("2", sql: "")
        do {
            let db = try Connection.inMemory()
            #expect(try migrator.completedMigrations(db) == [])
            #expect(try !migrator.hasCompletedMigrations(db))
            try migrator.migrate(db, upTo: "1")
            #expect(try migrator.completedMigrations(db) == ["1"])
            #expect(try !migrator.hasCompletedMigrations(db))
            try migrator.migrate(db, upTo: "2")
            #expect(try migrator.completedMigrations(db) == ["1", "2"])
            #expect(try migrator.hasCompletedMigrations(db))
        }
    }

    // testSuperseded
    @Test func superseded() throws {
        var migrator = SchemaMigrator()
        do {
            let db = try Connection.inMemory()
            #expect(try !migrator.hasBeenSuperseded(db))
        }
        try migrator.registerMigration("1", sql: "")
        do {
            let db = try Connection.inMemory()
            #expect(try !migrator.hasBeenSuperseded(db))
            try migrator.migrate(db, upTo: "1")
            #expect(try !migrator.hasBeenSuperseded(db))
        }
        try migrator.registerMigration("2", sql: "")
        do {
            let db = try Connection.inMemory()
            try migrator.migrate(db, upTo: "1")
            #expect(try !migrator.hasBeenSuperseded(db))
            try migrator.migrate(db, upTo: "2")
            #expect(try !migrator.hasBeenSuperseded(db))
        }
        // A database migrated by a newer migrator is superseded for the older one.
        var newer = migrator
        try newer.registerMigration("3", sql: "")
        let db = try Connection.inMemory()
        try newer.migrate(db)
        #expect(try migrator.hasBeenSuperseded(db))
        #expect(try migrator.hasCompletedMigrations(db))
    }

    // testMergedMigrators: a branch merge inserts a migration in the middle of history.
    @Test func branchMergeInsertsMigrationInTheMiddle() throws {
        var migrator1 = SchemaMigrator()
        try migrator1.registerMigration("1", sql: "")
        try migrator1.registerMigration("3", sql: "")
        let db = try Connection.inMemory()
        try migrator1.migrate(db)
        #expect(try migrator1.appliedMigrations(db) == ["1", "3"])
        #expect(try migrator1.appliedIdentifiers(db) == ["1", "3"])
        #expect(try migrator1.completedMigrations(db) == ["1", "3"])
        #expect(try migrator1.hasCompletedMigrations(db))
        #expect(try !migrator1.hasBeenSuperseded(db))

        var migrator2 = SchemaMigrator()
        try migrator2.registerMigration("1", sql: "")
        try migrator2.registerMigration("2", sql: "")
        try migrator2.registerMigration("3", sql: "")
        #expect(try migrator2.appliedMigrations(db) == ["1", "3"])
        #expect(try migrator2.completedMigrations(db) == ["1"])
        #expect(try !migrator2.hasCompletedMigrations(db))
        #expect(try !migrator2.hasBeenSuperseded(db))

        #expect(try migrator2.migrate(db).appliedIdentifiers == ["2"])
        #expect(try migrator1.appliedMigrations(db) == ["1", "3"])
        #expect(try migrator1.appliedIdentifiers(db) == ["1", "2", "3"])
        #expect(try migrator1.completedMigrations(db) == ["1", "3"])
        #expect(try migrator1.hasCompletedMigrations(db))
        #expect(try migrator1.hasBeenSuperseded(db))
        #expect(try migrator2.completedMigrations(db) == ["1", "2", "3"])
        #expect(try migrator2.hasCompletedMigrations(db))
        #expect(try !migrator2.hasBeenSuperseded(db))

        var migrator3 = migrator2
        try migrator3.registerMigration("4", sql: "")
        #expect(try migrator3.completedMigrations(db) == ["1", "2", "3"])
        #expect(try !migrator3.hasCompletedMigrations(db))
        #expect(try !migrator3.hasBeenSuperseded(db))
        try migrator3.migrate(db)
        #expect(try migrator1.appliedIdentifiers(db) == ["1", "2", "3", "4"])
        #expect(try migrator1.hasBeenSuperseded(db))
        #expect(try migrator2.appliedMigrations(db) == ["1", "2", "3"])
        #expect(try migrator2.hasCompletedMigrations(db))
        #expect(try migrator2.hasBeenSuperseded(db))
        #expect(try migrator3.appliedMigrations(db) == ["1", "2", "3", "4"])
        #expect(try migrator3.hasCompletedMigrations(db))
        #expect(try !migrator3.hasBeenSuperseded(db))
    }

    // testMigrations
    @Test func migrationsListsIdentifiersInOrder() throws {
        #expect(SchemaMigrator().migrations == [])
        var migrator = SchemaMigrator()
        try migrator.registerMigration("foo", sql: "")
        #expect(migrator.migrations == ["foo"])
        try migrator.registerMigration("bar") { _ in }
        #expect(migrator.migrations == ["foo", "bar"])
    }

    // MigrationCrashTests.testMigrationNamesMustBeUnique: a typed error instead of a crash.
    @Test func duplicateIdentifiersThrow() throws {
        var migrator = SchemaMigrator()
        try migrator.registerMigration("foo", sql: "")
        #expect(throws: FerryError.duplicateMigration(id: "foo")) { try migrator.registerMigration("foo", sql: "") }
        #expect(throws: FerryError.duplicateMigration(id: "foo")) { try migrator.registerMigration("foo") { _ in } }
        #expect(throws: FerryError.duplicateMigration(id: "foo")) {
            try migrator.registerMigration("bar", merging: ["foo"]) { _, _ in }
        }
        #expect(migrator.migrations == ["foo"])
        #expect(FerryError.duplicateMigration(id: "foo").description == "migration \"foo\" is already registered")
        #expect(throws: FerryError.invalidArguments("a migration identifier cannot be empty")) { try migrator.registerMigration("", sql: "") }
    }

    static let foreignKeyViolation = """
        CREATE TABLE parent(id INTEGER NOT NULL PRIMARY KEY);
        CREATE TABLE child(parentId INTEGER REFERENCES parent(id));
        INSERT INTO child (parentId) VALUES (1);
        """
    static let transientForeignKeyViolation = """
        CREATE TABLE parent(id INTEGER NOT NULL PRIMARY KEY);
        CREATE TABLE child(parentId INTEGER REFERENCES parent(id));
        INSERT INTO child (parentId) VALUES (1);
        DELETE FROM child;
        """

    static func migrator(_ sql: String, _ checks: SchemaMigrator.ForeignKeyChecks, disablingDeferred: Bool = false) throws -> SchemaMigrator {
        var migrator = disablingDeferred ? SchemaMigrator().disablingDeferredForeignKeyChecks() : SchemaMigrator()
        try migrator.registerMigration("A", foreignKeyChecks: checks, sql: sql)
        return migrator
    }

    // testMigrationForeignKeyChecks: deferred: permanent violation fails, transient passes;
    // immediate: both fail.
    @Test func migrationForeignKeyChecks() throws {
        do {
            let db = try Connection.inMemory()
            #expect { try Self.migrator(Self.foreignKeyViolation, .deferred).migrate(db) } throws: { ($0 as? FerryError)?.isForeignKeyViolation == true }
            try db.checkForeignKeys()
            #expect(try !db.tableExists("child"))
        }
        do {
            let db = try Connection.inMemory()
            #expect { try Self.migrator(Self.foreignKeyViolation, .immediate).migrate(db) } throws: { ($0 as? FerryError)?.resultCode == .constraintForeignKey }
            try db.checkForeignKeys()
        }
        do {
            let db = try Connection.inMemory()
            try Self.migrator(Self.transientForeignKeyViolation, .deferred).migrate(db)
            try db.checkForeignKeys()
        }
        do {
            let db = try Connection.inMemory()
            #expect { try Self.migrator(Self.transientForeignKeyViolation, .immediate).migrate(db) } throws: { ($0 as? FerryError)?.isForeignKeyViolation == true }
            try db.checkForeignKeys()
        }
    }

    // A connection opened without foreign keys runs every migration in a plain transaction.
    @Test func connectionWithoutForeignKeysSkipsChecks() throws {
        let db = try Connection.inMemory(configuration: .init(foreignKeys: false))
        try Self.migrator(Self.foreignKeyViolation, .deferred).migrate(db)
        #expect(try db.scalar("PRAGMA foreign_keys", as: Int.self) == 0)
        #expect(throws: (any Error).self) { try db.checkForeignKeys() }
    }

    // testDisablingDeferredForeignKeyChecks
    @Test func disablingDeferredForeignKeyChecks() throws {
        do {
            let db = try Connection.inMemory()
            try Self.migrator(Self.foreignKeyViolation, .deferred, disablingDeferred: true).migrate(db)
            // The unique opportunity for corrupt data.
            #expect(throws: FerryError.foreignKeyViolation(table: "child", columns: ["parentId"], parentTable: "parent",
                                                           parentColumns: ["id"], row: "rowid 1 [parentId:1]")) {
                try db.checkForeignKeys()
            }
            #expect(try db.scalar("PRAGMA foreign_keys", as: Int.self) == 1)
        }
        do {
            let db = try Connection.inMemory()
            #expect { try Self.migrator(Self.foreignKeyViolation, .immediate, disablingDeferred: true).migrate(db) } throws: { ($0 as? FerryError)?.isForeignKeyViolation == true }
            try db.checkForeignKeys()
        }
        do {
            let db = try Connection.inMemory()
            try Self.migrator(Self.transientForeignKeyViolation, .deferred, disablingDeferred: true).migrate(db)
            try db.checkForeignKeys()
        }
        do {
            let db = try Connection.inMemory()
            #expect { try Self.migrator(Self.transientForeignKeyViolation, .immediate, disablingDeferred: true).migrate(db) } throws: { ($0 as? FerryError)?.isForeignKeyViolation == true }
            try db.checkForeignKeys()
        }
    }

    // test_disablingDeferredForeignKeyChecks_applies_to_newly_registered_migrations_only
    @Test func disablingAppliesToNewlyRegisteredMigrationsOnly() throws {
        var migrator = SchemaMigrator()
        try migrator.registerMigration("A", sql: Self.foreignKeyViolation)
        migrator = migrator.disablingDeferredForeignKeyChecks()
        try migrator.registerMigration("B") { _ in Issue.record("B should not run") }
        let db = try Connection.inMemory()
        #expect { try migrator.migrate(db) } throws: { ($0 as? FerryError)?.isForeignKeyViolation == true }
        #expect(try migrator.appliedIdentifiers(db) == [])
    }

    // A Swift error thrown by a migration is rethrown unchanged, and rolls back that migration only.
    @Test func bodyErrorIsRethrownUnchanged() throws {
        struct Boom: Error, Equatable {}
        var migrator = SchemaMigrator()
        try migrator.registerMigration("1", sql: "CREATE TABLE t(a)")
        try migrator.registerMigration("2") { db in
            try db.execute("INSERT INTO t VALUES (1)")
            throw Boom()
        }
        try migrator.registerMigration("3") { _ in Issue.record("3 should not run") }
        let db = try Connection.inMemory()
        #expect(throws: Boom()) { try migrator.migrate(db) }
        #expect(try migrator.appliedIdentifiers(db) == ["1"])
        #expect(try db.scalar("SELECT count(*) FROM t", as: Int.self) == 0)
        #expect(!db.isInTransaction)
    }

    // A SQL error names the failing statement.
    @Test func sqlErrorIsThrown() throws {
        var migrator = SchemaMigrator()
        try migrator.registerMigration("1", sql: "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT)")
        try migrator.registerMigration("2", sql: "INSERT INTO player (id, name, score) VALUES (NULL, 'Arthur', 1000)")
        let db = try Connection.inMemory()
        #expect { try migrator.migrate(db) } throws: { error in
            guard case .sqlite(let code, let message, _) = error as? FerryError else { return false }
            return code == .error && message == "table player has no column named score"
        }
        #expect(try migrator.appliedMigrations(db) == ["1"])
    }

    @Test func migrateInsideTransactionIsMisuse() throws {
        var migrator = SchemaMigrator()
        try migrator.registerMigration("1", sql: "CREATE TABLE t(a)")
        let db = try Connection.inMemory()
        _ = try db.transaction {
            #expect { try migrator.migrate(db) } throws: { error in
                if case .misuse = error as? FerryError { return true }
                return false
            }
        }
        // A pool write is a transaction too: use writeWithoutTransaction (what migrate(pool) does).
        let dir = Sandbox()
        let pool = try DatabasePool(path: dir.path("db.sqlite"))
        _ = try pool.write { db in
            #expect(throws: (any Error).self) { try migrator.migrate(db) }
        }
        try migrator.migrate(pool)
    }
}
