import FerrySQLite
import Testing
@testable import Ferry

/// Merged migrations (GRDB 7.8/7.9's `registerMigration(_:merging:)`), applied correctly from every
/// starting point, in the Swift form and in Ferry's SQL form.
@Suite(.timeLimit(.minutes(2))) struct MergedMigrationTests {
    static func oldMigrator() throws -> SchemaMigrator {
        var old = SchemaMigrator()
        for i in 1...5 {
            try old.registerMigration("v\(i)", sql: "CREATE TABLE t\(i)(a)")
        }
        return old
    }

    static let allTables: Set<String> = ["t1", "t2", "t3", "t4", "t5"]

    /// Migrates a database with `old` up to each starting point (none, v1...v5), then with `new`, and
    /// checks the applied identifiers and tables.
    static func checkEveryStartingPoint(new: SchemaMigrator, expectedIdentifiers: Set<String>) throws {
        let old = try oldMigrator()
        for start in [nil] + old.migrations {
            let db = try Connection.inMemory()
            if let start { try old.migrate(db, upTo: start) }
            try new.migrate(db)
            #expect(try new.appliedIdentifiers(db) == expectedIdentifiers, "from \(start ?? "empty")")
            #expect(Set(try strings(db, "SELECT name FROM sqlite_master WHERE name LIKE 't%'")).isSuperset(of: allTables))
            #expect(try new.hasCompletedMigrations(db))
            #expect(try !new.hasBeenSuperseded(db))
            #expect(try new.migrate(db).applied.isEmpty)
        }
    }

    // test_merged_migrations_named_like_the_last
    @Test func mergedNamedLikeTheLast() throws {
        var new = SchemaMigrator()
        try new.registerMigration("v1") { db in try db.execute("CREATE TABLE t1(a)") }
        try new.registerMigration("v4", merging: ["v2", "v3"]) { db, applied in
            if !applied.contains("v2") { try db.execute("CREATE TABLE t2(a)") }
            if !applied.contains("v3") { try db.execute("CREATE TABLE t3(a)") }
            try db.execute("CREATE TABLE t4(a)")
        }
        try new.registerMigration("v5") { db in try db.execute("CREATE TABLE t5(a)") }
        // The old migrator declared SQL checksums, the closures declare none: nothing is compared.
        try Self.checkEveryStartingPoint(new: new, expectedIdentifiers: ["v1", "v4", "v5"])
    }

    // test_merged_migrations_named_like_the_last_that_includes_itself_in_the_list_of_merged_migrations
    @Test func mergedNamedLikeTheLastIncludingItself() throws {
        var new = SchemaMigrator()
        try new.registerMigration("v1") { db in try db.execute("CREATE TABLE t1(a)") }
        try new.registerMigration("v4", merging: ["v2", "v3", "v4"]) { db, applied in
            #expect(!applied.contains("v4"))
            if !applied.contains("v2") { try db.execute("CREATE TABLE t2(a)") }
            if !applied.contains("v3") { try db.execute("CREATE TABLE t3(a)") }
            try db.execute("CREATE TABLE t4(a)")
        }
        try new.registerMigration("v5") { db in try db.execute("CREATE TABLE t5(a)") }
        try Self.checkEveryStartingPoint(new: new, expectedIdentifiers: ["v1", "v4", "v5"])
    }

    // test_merged_migrations_with_a_new_name
    @Test func mergedWithANewName() throws {
        var new = SchemaMigrator()
        try new.registerMigration("v1") { db in try db.execute("CREATE TABLE t1(a)") }
        try new.registerMigration("v4bis", merging: ["v2", "v3", "v4"]) { db, applied in
            if !applied.contains("v2") { try db.execute("CREATE TABLE t2(a)") }
            if !applied.contains("v3") { try db.execute("CREATE TABLE t3(a)") }
            if !applied.contains("v4") { try db.execute("CREATE TABLE t4(a)") }
        }
        try new.registerMigration("v5") { db in try db.execute("CREATE TABLE t5(a)") }
        try Self.checkEveryStartingPoint(new: new, expectedIdentifiers: ["v1", "v4bis", "v5"])
    }

    // Ferry's SQL form: the merged migrations keep their SQL, so their checksums are verified and
    // the new v4's own SQL matches the old v4's checksum.
    @Test func mergedSQLNamedLikeTheLast() throws {
        var new = SchemaMigrator()
        try new.registerMigration("v1", sql: "CREATE TABLE t1(a)")
        try new.registerMigration("v4", merging: [.init("v2", sql: "CREATE TABLE t2(a)"), .init("v3", sql: "CREATE TABLE t3(a)")],
                                  sql: "CREATE TABLE t4(a)")
        try new.registerMigration("v5", sql: "CREATE TABLE t5(a)")
        try Self.checkEveryStartingPoint(new: new, expectedIdentifiers: ["v1", "v4", "v5"])

        // The bookkeeping says what v4 replaced.
        let db = try Connection.inMemory()
        try Self.oldMigrator().migrate(db, upTo: "v3")
        let report = try new.migrate(db)
        #expect(report.applied.map(\.replaced) == [["v2", "v3"], []])
        #expect(try new.appliedMigrationRecords(db).first { $0.identifier == "v4" }?.replaced == ["v2", "v3"])
    }

    @Test func mergedSQLWithANewName() throws {
        var new = SchemaMigrator()
        try new.registerMigration("v1", sql: "CREATE TABLE t1(a)")
        try new.registerMigration("v4bis", merging: [
            .init("v2", sql: "CREATE TABLE t2(a)"), .init("v3", sql: "CREATE TABLE t3(a)"), .init("v4", sql: "CREATE TABLE t4(a)"),
        ], sql: "")
        try new.registerMigration("v5", sql: "CREATE TABLE t5(a)")
        try Self.checkEveryStartingPoint(new: new, expectedIdentifiers: ["v1", "v4bis", "v5"])
        // Upgrade paths from every version of the old migrator reach the fresh schema.
        let report = try new.checkUpgradePaths(from: try Self.oldMigrator())
        #expect(report.problems == [])
        #expect(report.paths.count == 6)
    }

    @Test func mergedSQLDetectsAChangedMergedMigration() throws {
        var new = SchemaMigrator()
        try new.registerMigration("v1", sql: "CREATE TABLE t1(a)")
        try new.registerMigration("v4", merging: [.init("v2", sql: "CREATE TABLE t2(a, b)"), .init("v3", sql: "CREATE TABLE t3(a)")],
                                  sql: "CREATE TABLE t4(a)")
        let db = try Connection.inMemory()
        try Self.oldMigrator().migrate(db, upTo: "v2")
        #expect(try new.changedMigrations(db) == ["v2"])
        #expect(throws: FerryError.shippedMigrationChanged(id: "v2")) { try new.migrate(db) }
    }

    @Test func mergedSQLCannotMergeItself() throws {
        var migrator = SchemaMigrator()
        #expect(throws: FerryError.self) {
            try migrator.registerMigration("v4", merging: [.init("v4", sql: "")], sql: "")
        }
        #expect(throws: FerryError.duplicateMigration(id: "v2")) {
            try migrator.registerMigration("v4", merging: [.init("v2", sql: ""), .init("v2", sql: "")], sql: "")
        }
    }

    // A database that applied old v2 and v3 is not "too new" for the merged migrator, and is not
    // seen as a changed history by the development reset.
    @Test func mergedIdentifiersAreKnown() throws {
        var new = SchemaMigrator()
        try new.registerMigration("v1", sql: "CREATE TABLE t1(a)")
        try new.registerMigration("v4", merging: [.init("v2", sql: "CREATE TABLE t2(a)"), .init("v3", sql: "CREATE TABLE t3(a)")],
                                  sql: "CREATE TABLE t4(a)")
        let db = try Connection.inMemory()
        try Self.oldMigrator().migrate(db, upTo: "v3")
        #expect(try !new.hasBeenSuperseded(db))
        #expect(try !new.hasCompletedMigrations(db))
        #expect(try !new.hasSchemaChanges(db))
        new.eraseDatabaseOnSchemaChange = true
        try db.execute("INSERT INTO t2 VALUES ('kept')")
        #expect(try !new.migrate(db).erasedDatabase)
        #expect(try strings(db, "SELECT a FROM t2") == ["kept"])
    }
}
