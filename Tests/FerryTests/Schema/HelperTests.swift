import FerryTestSupport
import FerrySQLite
import Foundation
import Synchronization
import Testing
@testable import Ferry

/// Idempotent helpers, schema snapshots, the upgrade-path test helper, and the online-rebuild hook.
@Suite(.timeLimit(.minutes(2))) struct HelperTests {
    @Test func idempotentHelpersOnConnection() throws {
        let db = try MigrationConnection.inMemory()
        #expect(try db.createTableIfMissing("track", definition: "id INTEGER PRIMARY KEY, title TEXT"))
        #expect(try !db.createTableIfMissing("track", definition: "id INTEGER PRIMARY KEY, title TEXT"))
        #expect(try !db.createTableIfMissing("TRACK", definition: "x"))  // names match case-insensitively
        try db.execute("INSERT INTO track(title) VALUES ('a')")

        #expect(try db.addColumnIfMissing(table: "track", column: "playCount", definition: "INTEGER DEFAULT 0"))
        #expect(try !db.addColumnIfMissing(table: "track", column: "playCount", definition: "INTEGER DEFAULT 0"))
        #expect(try !db.addColumnIfMissing(table: "track", column: "PLAYCOUNT", definition: "TEXT"))
        #expect(try db.columnNames(in: "track") == ["id", "title", "playCount"])
        #expect(try db.scalar("SELECT playCount FROM track", as: Int.self) == 0)
        #expect(throws: FerryError.invalidArguments("cannot add column c: no table named missing")) {
            try db.addColumnIfMissing(table: "missing", column: "c", definition: "TEXT")
        }

        #expect(try db.createIndexIfMissing("track_title", on: "track", columns: ["title"], unique: true, where: "title IS NOT NULL"))
        #expect(try !db.createIndexIfMissing("track_title", on: "track", columns: ["title"]))
        #expect(try db.indexExists("track_title"))
        #expect(try db.scalar("SELECT sql FROM sqlite_master WHERE name = 'track_title'", as: String.self)
            == "CREATE UNIQUE INDEX \"track_title\" ON \"track\"(\"title\") WHERE title IS NOT NULL")
        #expect(try db.columnExists("title", in: "track"))
        #expect(try !db.columnExists("nope", in: "track"))
        #expect(try !db.tableExists("nope"))
    }

    // The seeds' checklist: migrations run twice are no-ops, steps are safe on a database where
    // the objects already exist.
    @Test func stepMigrationsAreIdempotent() throws {
        var migrator = SchemaMigrator()
        try migrator.registerMigration("v1", steps: [.createTableIfMissing("tableName", definition: "id TEXT PRIMARY KEY")])
        try migrator.registerMigration("v2", steps: [
            .addColumnIfMissing(table: "tableName", column: "newColumn", definition: "TEXT"),
            .createIndexIfMissing("tableName_newColumn", on: "tableName", columns: ["newColumn"]),
        ])
        // A database that already has the objects (e.g. created by a hotfix outside migrations).
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE tableName(id TEXT PRIMARY KEY, newColumn TEXT); INSERT INTO tableName(id) VALUES ('test1')")
        try migrator.migrate(db)
        try migrator.migrate(db)
        #expect(try db.scalar("SELECT count(*) FROM tableName", as: Int.self) == 1)
        #expect(try MigrationConnection(db).indexExists("tableName_newColumn"))
        #expect(try migrator.appliedMigrations(db) == ["v1", "v2"])
    }

    @Test func snapshotsCompareNormalizedSchemas() throws {
        let a = try Connection.inMemory()
        let b = try Connection.inMemory()
        try a.execute("CREATE TABLE t(a INTEGER, b TEXT); CREATE INDEX t_a ON t(a)")
        try b.execute("CREATE TABLE t (\n  a INTEGER,\n  b TEXT\n); CREATE INDEX t_a ON t (a)")
        try SchemaMigrator().migrate(b)  // internal tables are ignored
        try b.execute("CREATE TABLE ferry_internal(x); CREATE TABLE u(x UNIQUE); DROP TABLE u; ANALYZE")
        #expect(try SchemaSnapshot(a) == SchemaSnapshot(b))
        #expect(try SchemaSnapshot(a).objects.map(\.name) == ["t_a", "t"])

        try b.execute("CREATE VIEW v AS SELECT a FROM t; DROP INDEX t_a; CREATE INDEX t_a ON t(b)")
        #expect(try SchemaSnapshot(b).differences(from: SchemaSnapshot(a)) == [
            "changed index t_a: CREATE INDEX t_a ON t(a) -> CREATE INDEX t_a ON t(b)",
            "extra view v: CREATE VIEW v AS SELECT a FROM t",
        ])
        #expect(try SchemaSnapshot(a).differences(from: SchemaSnapshot(b)).last == "missing view v: CREATE VIEW v AS SELECT a FROM t")
    }

    static func appMigrator() throws -> SchemaMigrator {
        var migrator = SchemaMigrator()
        try migrator.registerMigration("v1", sql: "CREATE TABLE album(id INTEGER PRIMARY KEY, title TEXT)")
        try migrator.registerMigration("v2", sql: "ALTER TABLE album ADD COLUMN rating INTEGER")
        try migrator.registerMigration("v3", sql: "UPDATE album SET rating = 0 WHERE rating IS NULL")
        try migrator.registerMigration("v4", steps: [
            .createTableIfMissing("track", definition: "id INTEGER PRIMARY KEY, albumId INTEGER REFERENCES album(id), title TEXT"),
            .createIndexIfMissing("track_album", on: "track", columns: ["albumId"]),
        ])
        return migrator
    }

    // Fresh install and upgrade from every earlier version end with the same schema, migrating
    // twice is a no-op, and the seeded data survives.
    @Test func upgradePathsOfAHealthyHistory() throws {
        let migrator = try Self.appMigrator()
        let verified = Mutex<[String]>([])
        let report = try migrator.checkUpgradePaths(
            seed: { version, db in
                try db.execute("INSERT INTO album(title) VALUES (?)", [.text("seeded at \(version)")])
            },
            verify: { (from: String?, db: MigrationConnection) throws in
                verified.withLock { $0.append(from ?? "fresh") }
                guard let from else { return }
                #expect(try db.scalar("SELECT title FROM album", as: String.self) == "seeded at \(from)")
                // Rows seeded before the v3 backfill got a rating; rows seeded after it did not.
                #expect(try db.scalar("SELECT rating FROM album", as: Int.self) == (from == "v3" ? nil : 0))
            })
        #expect(report.problems == [])
        #expect(report.isSuccessful)
        #expect(report.paths.map(\.from) == [nil, "v1", "v2", "v3"])
        #expect(report.paths.map(\.applied) == [["v1", "v2", "v3", "v4"], ["v2", "v3", "v4"], ["v3", "v4"], ["v4"]])
        #expect(verified.withLock { $0 } == ["fresh", "v1", "v2", "v3"])
        #expect(report.freshSchema.objects.map(\.name) == ["track_album", "album", "track"])
    }

    // The helper reports a schema that depends on the path, and data lost on the way.
    @Test func upgradePathsReportDivergenceAndDataLoss() throws {
        var migrator = SchemaMigrator()
        try migrator.registerMigration("v1", sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT)")
        try migrator.registerMigration("v2") { db in
            // Path-dependent: only databases with notes get the index.
            if try db.scalar("SELECT count(*) FROM note", as: Int.self) ?? 0 > 0 {
                try db.execute("CREATE INDEX note_body ON note(body)")
            }
        }
        try migrator.registerMigration("v3", sql: "DELETE FROM note WHERE id > 1")
        let report = try migrator.checkUpgradePaths(seed: { _, db in
            try db.execute("INSERT INTO note(body) VALUES ('a'), ('b')")
        })
        #expect(report.problems == [
            "from v1: schema differs from a fresh install: extra index note_body: CREATE INDEX note_body ON note(body)",
            "from v1: table note held 2 row(s) and has 1 after the upgrade",
            "from v2: table note held 2 row(s) and has 1 after the upgrade",
        ])
        #expect(!report.isSuccessful)
    }

    @Test func upgradePathsReportFailures() throws {
        var migrator = SchemaMigrator()
        try migrator.registerMigration("v1", sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)")
        try migrator.registerMigration("v2", sql: "CREATE UNIQUE INDEX t_x ON t(id / 10)")
        let report = try migrator.checkUpgradePaths(seed: { _, db in try db.execute("INSERT INTO t VALUES (1), (2)") })
        #expect(report.problems.count == 1)
        #expect(report.problems.first?.hasPrefix("from v1: failed: ") == true)
        #expect(report.problems.first?.contains("UNIQUE constraint failed") == true)
    }

    @Test(.enabled(if: SQLiteEngine.supportsEncryption))
    func upgradePathsOnEncryptedDatabases() throws {
        let dir = Sandbox()
        let counter = Mutex(0)
        let cipher = try Cipher.rawKey(Array(repeating: 3, count: 32))
        let report = try Self.appMigrator().checkUpgradePaths(makeDatabase: {
            let n = counter.withLock { $0 += 1; return $0 }
            return try MigrationConnection(path: dir.path("db\(n).sqlite"), configuration: .init(cipher: cipher))
        })
        #expect(report.problems == [])
        #expect(counter.withLock { $0 } == 4)
    }

    struct RecordingExecutor: OnlineRebuildExecutor {
        let calls: Calls
        func run(_ rebuild: OnlineRebuild, on db: MigrationConnection) throws {
            calls.value.withLock { $0.append(rebuild.table) }
            // What an engine would do, in its simplest blocking form.
            let columns = rebuild.columnMapping.map { Connection.quoteIdentifier($0.column) }.joined(separator: ", ")
            let expressions = rebuild.columnMapping.map(\.expression).joined(separator: ", ")
            try db.execute("CREATE TABLE ferry_rebuild_new (\(rebuild.newDefinition))")
            try db.execute("INSERT INTO ferry_rebuild_new (\(columns)) SELECT \(expressions) FROM \(Connection.quoteIdentifier(rebuild.table))")
            try db.execute("DROP TABLE \(Connection.quoteIdentifier(rebuild.table))")
            try db.execute("ALTER TABLE ferry_rebuild_new RENAME TO \(Connection.quoteIdentifier(rebuild.table))")
        }
    }

    final class Calls: Sendable {
        let value = Mutex<[String]>([])
    }

    @Test func onlineRebuildExtensionPoint() throws {
        let calls = Calls()
        let executor = RecordingExecutor(calls: calls)
        let rebuild = OnlineRebuild(
            table: "person", newDefinition: "id INTEGER PRIMARY KEY, fullName TEXT",
            columnMapping: [.init("id", from: "id"), .init("fullName", from: "first || ' ' || last")])
        var migrator = SchemaMigrator()
        try migrator.registerMigration("v1", sql: "CREATE TABLE person(id INTEGER PRIMARY KEY, first TEXT, last TEXT)")
        try migrator.registerOnlineRebuild("v2", rebuild, executor: executor)
        let db = try Connection.inMemory()
        try migrator.migrate(db, upTo: "v1")
        try db.execute("INSERT INTO person(first, last) VALUES ('Ada', 'Lovelace')")
        try migrator.migrate(db)
        #expect(calls.value.withLock { $0 } == ["person"])
        #expect(try db.scalar("SELECT fullName FROM person", as: String.self) == "Ada Lovelace")
        let record = try migrator.appliedMigrationRecords(db).last
        #expect(record?.kind == "online-rebuild")
        #expect(record?.checksum?.hasPrefix("sha256v1:") == true)

        // The declaration is checksummed.
        var changed = SchemaMigrator()
        try changed.registerMigration("v1", sql: "CREATE TABLE person(id INTEGER PRIMARY KEY, first TEXT, last TEXT)")
        var other = rebuild
        other.filter = "id > 0"
        try changed.registerOnlineRebuild("v2", other, executor: executor)
        #expect(try changed.changedMigrations(db) == ["v2"])
    }

    // Two connections to one file: the second sees the first's migrations and applies only the rest;
    // a database migrated further by another process is reported as superseded.
    @Test func twoConnectionsShareTheHistory() throws {
        let dir = Sandbox()
        let path = dir.path("shared.sqlite")
        let a = try Connection(path: path)
        let b = try Connection(path: path)
        let old = try Self.appMigrator()
        var new = old
        try new.registerMigration("v5", sql: "CREATE TABLE playlist(id INTEGER PRIMARY KEY)")
        try old.migrate(a)
        #expect(try new.migrate(b).appliedIdentifiers == ["v5"])
        #expect(try old.hasBeenSuperseded(a))
        #expect(try old.migrate(a).applied.isEmpty)
    }
}
