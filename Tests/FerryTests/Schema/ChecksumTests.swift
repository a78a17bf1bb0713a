import FerrySQLite
import Testing
@testable import Ferry

/// SHA-256, the SQL normalizer, and migration checksums (`shippedMigrationChanged`).
@Suite(.timeLimit(.minutes(2))) struct ChecksumTests {
    // FIPS 180-4 / NIST CSRC example vectors.
    @Test func sha256MatchesTheStandardVectors() {
        #expect(SHA256.hexDigest("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hexDigest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hexDigest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256.hexDigest("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu")
            == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
        var hasher = SHA256()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { hasher.update(chunk) }
        #expect(SHA256.hexString(hasher.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func sha256PaddingBoundaries() {
        // 55, 56, 63 and 64 bytes straddle the padding block boundary.
        #expect(SHA256.hexDigest(String(repeating: "a", count: 55)) == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
        #expect(SHA256.hexDigest(String(repeating: "a", count: 56)) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
        #expect(SHA256.hexDigest(String(repeating: "a", count: 64)) == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
    }

    @Test func normalizerIgnoresWhitespaceAndComments() {
        let a = SQLNormalizer.normalize("CREATE TABLE t(a INTEGER, b TEXT)")
        #expect(a == "CREATE TABLE t(a INTEGER,b TEXT)")
        #expect(SQLNormalizer.normalize("""
            -- comment
            CREATE   TABLE t (
              a INTEGER , /* inline */ b TEXT
            ) ;;
            """) == a)
        // Literals and quoted identifiers are kept byte for byte.
        #expect(SQLNormalizer.normalize("SELECT 'a  --b', \"x  y\", [p  q], `r  s`") == "SELECT 'a  --b',\"x  y\",[p  q],`r  s`")
        #expect(SQLNormalizer.normalize("SELECT 'it''s  here'") == "SELECT 'it''s  here'")
        // Case is kept; minus signs never merge into a comment; X 'ab' differs from X'ab'.
        #expect(SQLNormalizer.normalize("create table T(a)") != SQLNormalizer.normalize("CREATE TABLE T(a)"))
        #expect(SQLNormalizer.normalize("SELECT 1 - -1") == "SELECT 1- -1")
        #expect(SQLNormalizer.normalize("SELECT X 'ab'") != SQLNormalizer.normalize("SELECT X'ab'"))
        #expect(SQLNormalizer.normalize("a; ;b;") == "a;b")
    }

    static func migrator(_ sql: String, checks: SchemaMigrator.ForeignKeyChecks = .deferred) throws -> SchemaMigrator {
        var migrator = SchemaMigrator()
        try migrator.registerMigration("v1", sql: "CREATE TABLE t(a)")
        try migrator.registerMigration("v2", foreignKeyChecks: checks, sql: sql)
        return migrator
    }

    @Test func recordsTimeDurationChecksumAndKind() throws {
        var migrator = try Self.migrator("CREATE INDEX t_a ON t(a)")
        try migrator.registerMigration("v3", checksum: "1") { db in try db.execute("INSERT INTO t VALUES (1)") }
        try migrator.registerMigration("v4") { _ in }
        let db = try Connection.inMemory()
        try migrator.migrate(db)
        let records = try migrator.appliedMigrationRecords(db)
        #expect(records.map(\.identifier) == ["v1", "v2", "v3", "v4"])
        #expect(records.map(\.kind) == ["sql", "sql", "closure", "closure"])
        #expect(records[0].checksum?.hasPrefix("sha256v1:") == true)
        #expect(records[0].checksum?.count == "sha256v1:".count + 64)
        #expect(records[2].checksum == "app:1")
        #expect(records[3].checksum == nil)
        for record in records {
            #expect(record.duration >= .zero)
            // 2026-01-31T12:00:00.123Z
            #expect(record.appliedAt.count == 24 && record.appliedAt.hasSuffix("Z") && record.appliedAt.contains("T"))
        }
        // The bookkeeping table lives in main, schema-qualified, with the documented columns.
        #expect(try db.columnNames(in: SchemaMigrator.bookkeepingTable) ==
                ["identifier", "applied_at", "duration_ms", "checksum", "kind", "replaced", "lint_allowances"])
    }

    @Test func changedSQLIsDetected() throws {
        let db = try Connection.inMemory()
        try Self.migrator("CREATE INDEX t_a ON t(a)").migrate(db)
        let edited = try Self.migrator("CREATE UNIQUE INDEX t_a ON t(a)")
        #expect(try edited.changedMigrations(db) == ["v2"])
        #expect(throws: FerryError.shippedMigrationChanged(id: "v2")) { try edited.migrate(db) }
        #expect(FerryError.shippedMigrationChanged(id: "v2").description.contains("immutable"))
        // Nothing ran: the index is still the original one.
        #expect(try db.scalar("SELECT sql FROM sqlite_master WHERE name = 't_a'", as: String.self) == "CREATE INDEX t_a ON t(a)")
    }

    @Test func changedOptionsAreDetected() throws {
        let db = try Connection.inMemory()
        try Self.migrator("CREATE INDEX t_a ON t(a)").migrate(db)
        #expect(try Self.migrator("CREATE INDEX t_a ON t(a)", checks: .immediate).changedMigrations(db) == ["v2"])
        // The migrator-wide switch is not part of a migration's declaration.
        var disabled = SchemaMigrator().disablingDeferredForeignKeyChecks()
        try disabled.registerMigration("v1", sql: "CREATE TABLE t(a)")
        #expect(try disabled.changedMigrations(db) == [])
    }

    @Test func formattingChangesAreNotChanges() throws {
        let db = try Connection.inMemory()
        try Self.migrator("CREATE INDEX t_a ON t(a)").migrate(db)
        let reformatted = try Self.migrator("""
            -- index for lookups by a
            CREATE INDEX t_a
                ON t (a);
            """)
        #expect(try reformatted.changedMigrations(db) == [])
        try reformatted.migrate(db)
    }

    @Test func closureChecksumsAreVersionStrings() throws {
        let db = try Connection.inMemory()
        var v1 = SchemaMigrator()
        try v1.registerMigration("a", checksum: "1") { db in try db.execute("CREATE TABLE a(x)") }
        try v1.registerMigration("b") { db in try db.execute("CREATE TABLE b(x)") }
        try v1.migrate(db)

        var bumped = SchemaMigrator()
        try bumped.registerMigration("a", checksum: "2") { db in try db.execute("CREATE TABLE a(x, y)") }
        try bumped.registerMigration("b", checksum: "1") { db in try db.execute("CREATE TABLE b(x, y)") }
        // a was recorded with version 1: changed. b was recorded unchecked: never compared.
        #expect(try bumped.changedMigrations(db) == ["a"])
        #expect(throws: FerryError.shippedMigrationChanged(id: "a")) { try bumped.migrate(db) }

        var unchecked = bumped
        unchecked.verifiesChecksums = false
        try unchecked.migrate(db)
    }

    @Test func repairChecksumsAcceptsTheCurrentDeclarations() throws {
        let db = try Connection.inMemory()
        try Self.migrator("CREATE INDEX t_a ON t(a)").migrate(db)
        var edited = try Self.migrator("CREATE INDEX IF NOT EXISTS t_a ON t(a)")
        try edited.registerMigration("v3", sql: "CREATE TABLE u(b)")
        #expect(try edited.repairChecksums(db) == ["v2"])
        #expect(try edited.changedMigrations(db) == [])
        #expect(try edited.migrate(db).appliedIdentifiers == ["v3"])
    }

    @Test func developmentResetErasesOnChangedChecksum() throws {
        let db = try Connection.inMemory()
        try Self.migrator("CREATE TABLE u(b)").migrate(db)
        try db.execute("INSERT INTO u VALUES (1)")
        // Same schema, different data migration: only the checksum can tell.
        var edited = try Self.migrator("CREATE TABLE u(b); INSERT INTO u VALUES (2)")
        edited.eraseDatabaseOnSchemaChange = true
        #expect(try edited.hasSchemaChanges(db))
        #expect(try edited.migrate(db).erasedDatabase)
        #expect(try db.scalar("SELECT b FROM u", as: Int.self) == 2)
    }

    @Test func stepsAreChecksummed() throws {
        func migrator(_ definition: String) throws -> SchemaMigrator {
            var m = SchemaMigrator()
            try m.registerMigration("v1", steps: [.createTableIfMissing("t", definition: "a INTEGER")])
            try m.registerMigration("v2", steps: [.addColumnIfMissing(table: "t", column: "b", definition: definition)])
            return m
        }
        let db = try Connection.inMemory()
        try migrator("TEXT").migrate(db)
        #expect(try migrator("TEXT").changedMigrations(db) == [])
        #expect(try migrator("  TEXT ").changedMigrations(db) == [])
        #expect(try migrator("INTEGER").changedMigrations(db) == ["v2"])
        // Same SQL declared as a step or as text: different declarations, different checksums.
        #expect(Migration.checksum(of: [.sql("CREATE TABLE t(a)")], foreignKeyChecks: .deferred)
            != Migration.checksum(of: [.createTableIfMissing("t", definition: "a")], foreignKeyChecks: .deferred))
        #expect(Migration.checksum(of: [.sql("a"), .sql("b")], foreignKeyChecks: .deferred)
            != Migration.checksum(of: [.sql("a;b")], foreignKeyChecks: .deferred))
    }
}
