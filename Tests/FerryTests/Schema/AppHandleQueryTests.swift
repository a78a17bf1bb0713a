import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// The schema migrator's queries on the app's handle, as GRDB documents them on its pool:
/// `db.read(migrator.hasCompletedMigrations)`, on a database whose table migrates and on a plain one.
@Suite(.timeLimit(.minutes(2))) struct AppHandleQueryTests {
    static func migrator(upTo count: Int) throws -> SchemaMigrator {
        var migrator = SchemaMigrator()
        let all = [("v1", "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)"), ("v2", "ALTER TABLE notes ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0"),
                   ("v3", "CREATE INDEX notes_pinned ON notes(pinned)")]
        for (identifier, sql) in all.prefix(count) { try migrator.registerMigration(identifier, sql: sql) }
        return migrator
    }

    @Test(arguments: [false, true])
    func migratorQueriesReadThroughTheAppsHandle(migrating: Bool) throws {
        let box = Sandbox()
        let plan: MigrationPlan = migrating ? .messages(from: try box.makeLegacy(rows: 50)) : MigrationPlan(sources: [])
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .fixedBatches(of: 10))
        defer { db.close() }
        let two = try Self.migrator(upTo: 2)
        let three = try Self.migrator(upTo: 3)
        #expect(try db.read(two.hasCompletedMigrations) == false)
        _ = try db.migrateSchema(two)
        #expect(try db.read(two.hasCompletedMigrations))
        #expect(try db.read(three.hasCompletedMigrations) == false)  // too old for v3
        #expect(try db.read(two.appliedMigrations) == ["v1", "v2"])
        #expect(try db.read(three.completedMigrations) == ["v1", "v2"])
        #expect(try db.read(Self.migrator(upTo: 1).hasBeenSuperseded))  // too new for a v1-only app
        #expect(try db.read(two.hasBeenSuperseded) == false)
        #expect(try db.read(two.changedMigrations).isEmpty)
        // (A target the migration plan created is a table no schema migration declares: replaying
        // the migrations does not make it, so it counts as a schema change there.)
        #expect(try db.read(two.hasSchemaChanges) == migrating)
        #expect(try db.read(two.appliedMigrationRecords).map(\.identifier) == ["v1", "v2"])
        // In a write, and in closures.
        #expect(try db.write { db throws(FerryError) in try three.appliedIdentifiers(db) } == ["v1", "v2"])
        #expect(try db.read { db throws(FerryError) in try three.hasCompletedMigrations(db) } == false)
        // The app's own statements still cannot write the bookkeeping table.
        #expect(throws: FerryError.self) { try db.write { try $0.execute("DELETE FROM ferry_schema_migrations") } }
    }

    /// From async code the same spellings pick the async `read`.
    @Test func fromAsyncCode() async throws {
        let box = Sandbox()
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: try box.makeLegacy(rows: 20)))
        defer { db.close() }
        let two = try Self.migrator(upTo: 2)
        _ = try await db.migrateSchema(two)
        #expect(try await db.read(two.hasCompletedMigrations))
        #expect(try await db.read(Self.migrator(upTo: 3).appliedMigrations) == ["v1", "v2"])
    }
}
