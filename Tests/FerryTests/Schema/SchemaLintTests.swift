import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// Every lint rule, alone and inside the migrator.
@Suite(.timeLimit(.minutes(2))) struct SchemaLintTests {
    static func database() throws -> Connection {
        let db = try Connection.inMemory()
        try db.execute("""
            CREATE TABLE album(id INTEGER PRIMARY KEY, title TEXT, legacy TEXT);
            CREATE TABLE track(id INTEGER PRIMARY KEY, albumId INTEGER REFERENCES album(id) ON DELETE CASCADE, title TEXT);
            CREATE TABLE empty(id INTEGER PRIMARY KEY);
            INSERT INTO album(title) VALUES ('Blue');
            INSERT INTO track(albumId, title) VALUES (1, 'River');
            """)
        return db
    }

    static func rules(_ findings: [SchemaLintFinding]) -> [SchemaLintRule] { findings.map(\.rule) }

    // MARK: drop-table-with-rows

    @Test func dropTableWithRowsIsRefused() throws {
        let db = try Self.database()
        let findings = try SchemaLint.lint("DROP TABLE album", database: db)
        #expect(Self.rules(findings) == [.dropTableWithRows])
        let finding = try #require(findings.first)
        #expect(finding.isRefusal)
        #expect(finding.statement == "DROP TABLE album")
        #expect(finding.message == "Table album holds rows: dropping it deletes them for good.")
        #expect(finding.advice.contains("deprecate"))
        #expect(finding.advice.contains(".allow(rule, because:"))
    }

    @Test func dropTableWithoutRowsIsFine() throws {
        let db = try Self.database()
        #expect(try SchemaLint.lint("DROP TABLE empty", database: db) == [])
        #expect(try SchemaLint.lint("DROP TABLE IF EXISTS missing", database: db) == [])
        // Created (and even filled) by the same script: not user data.
        #expect(try SchemaLint.lint("CREATE TABLE tmp(x); INSERT INTO tmp VALUES (1); DROP TABLE tmp", database: db) == [])
        // Other schemas and other object kinds are not this rule's business.
        #expect(try SchemaLint.lint("DROP TABLE temp.album; DROP VIEW v; DROP INDEX i", database: db) == [])
    }

    @Test func dropTableWithoutDatabaseAssumesRows() throws {
        let findings = try SchemaLint.lint("DROP TABLE IF EXISTS album")
        #expect(Self.rules(findings) == [.dropTableWithRows])
        #expect(findings.first?.message.contains("may hold rows (the lint ran without a database)") == true)
        #expect(try SchemaLint.lint("CREATE TABLE t(a); DROP TABLE t") == [])
    }

    @Test func deletingRowsFirstDoesNotHideThem() throws {
        let db = try Self.database()
        #expect(Self.rules(try SchemaLint.lint("DELETE FROM album; DROP TABLE album", database: db)) == [.dropTableWithRows])
    }

    // MARK: drop-column

    @Test func dropColumnIsRefused() throws {
        let db = try Self.database()
        for sql in ["ALTER TABLE album DROP COLUMN legacy", "alter table main.album drop legacy"] {
            let findings = try SchemaLint.lint(sql, database: db)
            #expect(Self.rules(findings) == [.dropColumn])
            #expect(findings.first?.message == "Dropping column album.legacy deletes its data for good (SQLite rewrites the table).")
            #expect(findings.first?.advice.contains("add a new column, copy the data, and deprecate the old one") == true)
        }
        #expect(Self.rules(try SchemaLint.lint("ALTER TABLE whatever DROP COLUMN c")) == [.dropColumn])
    }

    // MARK: add-not-null-column-without-default

    @Test func addNotNullColumnWithoutDefaultIsRefused() throws {
        let findings = try SchemaLint.lint("ALTER TABLE album ADD COLUMN rating INTEGER NOT NULL")
        #expect(Self.rules(findings) == [.addNotNullColumnWithoutDefault])
        #expect(findings.first?.advice.contains("nullable first and backfill") == true)
        #expect(try SchemaLint.lint("ALTER TABLE album ADD COLUMN rating INTEGER NOT NULL DEFAULT 0") == [])
        #expect(try SchemaLint.lint("ALTER TABLE album ADD rating INTEGER") == [])
        #expect(try SchemaLint.lint("ALTER TABLE album ADD COLUMN upper TEXT NOT NULL AS (upper(title))") == [])
        // The idempotent helper's SQL is linted too.
        let step = SchemaStep.addColumnIfMissing(table: "album", column: "rating", definition: "INTEGER NOT NULL")
        #expect(Self.rules(try SchemaLint.lint(steps: [step], db: nil, foreignKeysEnforced: false, allowances: [])) == [.addNotNullColumnWithoutDefault])
    }

    // MARK: rebuild-drops-data

    static let completeRebuild = """
        CREATE TABLE new_album(id INTEGER PRIMARY KEY, title TEXT NOT NULL DEFAULT '', legacy TEXT);
        INSERT INTO new_album(id, title, legacy) SELECT id, coalesce(title, ''), legacy FROM album;
        DROP TABLE album;
        ALTER TABLE new_album RENAME TO album;
        """

    @Test func completeRebuildIsFine() throws {
        let db = try Self.database()
        #expect(try SchemaLint.lint(Self.completeRebuild, database: db) == [])
        #expect(try SchemaLint.lint("""
            CREATE TABLE new_album(id INTEGER PRIMARY KEY, title TEXT, legacy TEXT);
            INSERT INTO new_album SELECT * FROM album;
            DROP TABLE album;
            ALTER TABLE new_album RENAME TO album;
            """, database: db) == [])
    }

    @Test func rebuildThatDropsAColumnIsRefused() throws {
        let db = try Self.database()
        let findings = try SchemaLint.lint("""
            CREATE TABLE new_album(id INTEGER PRIMARY KEY, title TEXT);
            INSERT INTO new_album SELECT id, title FROM album;
            DROP TABLE album;
            ALTER TABLE new_album RENAME TO album;
            """, database: db)
        #expect(Self.rules(findings) == [.rebuildDropsData])
        #expect(findings.first?.statement == "DROP TABLE album")
        #expect(findings.first?.message == "The rebuild of album does not copy column(s) legacy: that data is lost when album is dropped.")
    }

    @Test func rebuildThatSkipsRowsIsRefused() throws {
        let db = try Self.database()
        let findings = try SchemaLint.lint("""
            CREATE TABLE new_album(id INTEGER PRIMARY KEY, title TEXT, legacy TEXT);
            INSERT INTO new_album SELECT id, title, legacy FROM album WHERE title IS NOT NULL;
            DROP TABLE album;
            ALTER TABLE new_album RENAME TO album;
            """, database: db)
        #expect(Self.rules(findings) == [.rebuildDropsData])
        #expect(findings.first?.message.contains("may skip rows (WHERE)") == true)
    }

    // The other spelling of SQLite's procedure: move the old table aside, create, copy, drop.
    @Test func rebuildByMovingTheOldTableAside() throws {
        let db = try Self.database()
        #expect(try SchemaLint.lint("""
            ALTER TABLE album RENAME TO old_album;
            CREATE TABLE album(id INTEGER PRIMARY KEY, title TEXT, legacy TEXT, year INTEGER);
            INSERT INTO album(id, title, legacy) SELECT id, title, legacy FROM old_album;
            DROP TABLE old_album;
            """, database: db) == [])
        #expect(Self.rules(try SchemaLint.lint("""
            ALTER TABLE album RENAME TO old_album;
            CREATE TABLE album(id INTEGER PRIMARY KEY, title TEXT);
            INSERT INTO album(id, title) SELECT id, title FROM old_album;
            DROP TABLE old_album;
            """, database: db)) == [.rebuildDropsData])
    }

    @Test func rebuildOfAnEmptyTableIsFine() throws {
        let db = try Self.database()
        #expect(try SchemaLint.lint("""
            CREATE TABLE new_empty(id INTEGER PRIMARY KEY, note TEXT);
            INSERT INTO new_empty(id) SELECT id FROM empty WHERE id > 10;
            DROP TABLE empty;
            ALTER TABLE new_empty RENAME TO empty;
            """, database: db) == [])
    }

    // MARK: destructive-on-delete

    @Test func droppingAParentWithCascadingChildrenUnderEnforcedForeignKeys() throws {
        let db = try Self.database()
        let findings = try SchemaLint.lint(Self.completeRebuild, database: db, foreignKeyChecks: .immediate)
        #expect(Self.rules(findings) == [.destructiveForeignKeyAction])
        #expect(findings.first?.message == "Table album holds rows, and dropping it with foreign keys enforced runs track(albumId) ON DELETE CASCADE: their rows would be deleted or rewritten.")
        #expect(findings.first?.advice.contains("foreignKeyChecks: .deferred") == true)
        // Deferred checks (the default) run the migration with foreign keys off: nothing fires.
        #expect(try SchemaLint.lint(Self.completeRebuild, database: db, foreignKeyChecks: .deferred) == [])
        // A connection that does not enforce foreign keys fires nothing either.
        let plain = try Connection.inMemory(configuration: .init(foreignKeys: false))
        try plain.execute("CREATE TABLE p(id INTEGER PRIMARY KEY); CREATE TABLE c(p REFERENCES p ON DELETE SET NULL); INSERT INTO p VALUES (1)")
        #expect(Self.rules(try SchemaLint.lint("DROP TABLE p", database: plain, foreignKeyChecks: .immediate)) == [.dropTableWithRows])
    }

    @Test func restrictAndNoActionAreNotDestructive() throws {
        let db = try Connection.inMemory()
        try db.execute("""
            CREATE TABLE p(id INTEGER PRIMARY KEY);
            CREATE TABLE c1(p REFERENCES p ON DELETE RESTRICT);
            CREATE TABLE c2(p REFERENCES p);
            CREATE TABLE c3(p, FOREIGN KEY (p) REFERENCES p(id) ON DELETE SET DEFAULT);
            INSERT INTO p VALUES (1);
            """)
        let findings = try SchemaLint.lint("DROP TABLE p", database: db, foreignKeyChecks: .immediate)
        #expect(Self.rules(findings) == [.destructiveForeignKeyAction, .dropTableWithRows])
        #expect(findings.first?.message.contains("c3(p) ON DELETE SET DEFAULT") == true)
        #expect(findings.first?.message.contains("c1") == false)
    }

    @Test func childrenCreatedInTheScriptCount() throws {
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE parent(id INTEGER PRIMARY KEY); INSERT INTO parent VALUES (1)")
        let findings = try SchemaLint.lint("""
            CREATE TABLE child(parentId INTEGER REFERENCES parent(id) ON DELETE CASCADE);
            DROP TABLE parent;
            """, database: db, foreignKeyChecks: .immediate)
        #expect(Self.rules(findings) == [.destructiveForeignKeyAction, .dropTableWithRows])
        #expect(findings.first?.message.contains("child(parentId) ON DELETE CASCADE") == true)
    }

    // MARK: rename (warning)

    @Test func renamesAreWarnings() throws {
        let findings = try SchemaLint.lint("ALTER TABLE album RENAME TO record; ALTER TABLE record RENAME COLUMN title TO name")
        #expect(Self.rules(findings) == [.rename, .rename])
        #expect(findings.allSatisfy { !$0.isRefusal })
        #expect(findings[0].message.hasPrefix("Renaming table album to record"))
        #expect(findings[1].message.hasPrefix("Renaming column record.title to name"))
        #expect(findings[0].advice == "Safer pattern: add the new column or table, copy the data, and deprecate the old one.")
        // The renames of a rebuild are not renames.
        #expect(try SchemaLint.lint(Self.completeRebuild, database: try Self.database()) == [])
    }

    // MARK: Parsing

    @Test func findingsNameTheStatementAsWritten() throws {
        let findings = try SchemaLint.lint("""
            -- clean up
            CREATE INDEX IF NOT EXISTS i ON album(title);
            ALTER TABLE  album
                DROP COLUMN legacy;  -- gone
            """)
        #expect(findings.map(\.statement) == ["ALTER TABLE  album\n    DROP COLUMN legacy"])
    }

    /// A statement FerrySQL cannot parse is skipped (SQLite may still run it); a script that does not
    /// even tokenize is an input error (`unreadableBytesAreAnInputErrorNeverAPass`).
    @Test func unparsableStatementsAreSkipped() throws {
        #expect(try SchemaLint.lint("THIS IS NOT SQL; ALTER TABLE t DROP COLUMN c").map(\.rule) == [.dropColumn])
        #expect(throws: FerryError.self) { try SchemaLint.lint("'unterminated") }
    }

    @Test func allowancesCarryTheReason() throws {
        let findings = try SchemaLint.lint("ALTER TABLE t DROP COLUMN c; DROP TABLE t", allowances: [.allow(.dropColumn, because: "c never held data")])
        #expect(findings.map(\.allowedBecause) == ["c never held data", nil])
        #expect(findings.map(\.isRefusal) == [false, true])
        #expect(findings[0].description.contains("allowed because: c never held data"))
    }

    // MARK: Inside the migrator

    static func appMigrator() throws -> SchemaMigrator {
        var migrator = SchemaMigrator()
        try migrator.registerMigration("v1", sql: "CREATE TABLE album(id INTEGER PRIMARY KEY, title TEXT, legacy TEXT)")
        return migrator
    }

    @Test func migratorRefusesUnsafeMigrationsBeforeTheyRun() throws {
        var migrator = try Self.appMigrator()
        try migrator.registerMigration("v2", sql: "ALTER TABLE album DROP COLUMN legacy")
        let db = try Connection.inMemory()
        try migrator.migrate(db, upTo: "v1")
        try db.execute("INSERT INTO album(title, legacy) VALUES ('Blue', 'x')")
        #expect { try migrator.migrate(db) } throws: { error in
            guard case .unsafeMigration(let id, let rule, let statement, let advice) = error as? FerryError else { return false }
            return id == "v2" && rule == .dropColumn && statement == "ALTER TABLE album DROP COLUMN legacy"
                && advice.contains("deprecate")
        }
        #expect(try db.columnNames(in: "album") == ["id", "title", "legacy"])
        #expect(try migrator.appliedMigrations(db) == ["v1"])
        let description = FerryError.unsafeMigration(id: "v2", rule: .dropColumn, statement: "S", advice: "A").description
        #expect(description == "migration \"v2\" refused by safety rule drop-column: `S` - A")
    }

    @Test func migratorChecksDataAtRunTime() throws {
        var migrator = try Self.appMigrator()
        try migrator.registerMigration("v2", sql: "DROP TABLE album")
        // On a fresh install the table is empty: the drop is harmless.
        let fresh = try Connection.inMemory()
        try migrator.migrate(fresh)
        // On an upgrade it holds user data: refused.
        let upgrade = try Connection.inMemory()
        try migrator.migrate(upgrade, upTo: "v1")
        try upgrade.execute("INSERT INTO album(title) VALUES ('Blue')")
        #expect(throws: FerryError.self) { try migrator.migrate(upgrade) }
        #expect(try upgrade.tableExists("album"))
    }

    @Test func optOutIsRecordedWithItsReason() throws {
        var migrator = try Self.appMigrator()
        try migrator.registerMigration("v2", allowing: [.allow(.dropColumn, because: "legacy was exported in v1.3")],
                                       sql: "ALTER TABLE album DROP COLUMN legacy; ALTER TABLE album RENAME COLUMN title TO name")
        let db = try Connection.inMemory()
        try migrator.migrate(db, upTo: "v1")
        try db.execute("INSERT INTO album(title, legacy) VALUES ('Blue', 'x')")
        let report = try migrator.migrate(db)
        #expect(report.lintFindings.map(\.rule) == [.dropColumn, .rename])
        #expect(try db.columnNames(in: "album") == ["id", "name"])
        #expect(try migrator.appliedMigrationRecords(db).last?.lintAllowances == "drop-column: legacy was exported in v1.3")
        // Opting out is not part of the checksum: adding a reason later does not "change" the migration.
        var without = try Self.appMigrator()
        try without.registerMigration("v2", sql: "ALTER TABLE album DROP COLUMN legacy; ALTER TABLE album RENAME COLUMN title TO name")
        #expect(try without.changedMigrations(db) == [])
    }

    @Test func optOutNeedsAReason() throws {
        var migrator = SchemaMigrator()
        #expect(throws: FerryError.self) {
            try migrator.registerMigration("v1", allowing: [.allow(.dropColumn, because: "  ")], sql: "")
        }
    }

    @Test func lintModes() throws {
        var migrator = try Self.appMigrator()
        try migrator.registerMigration("v2", sql: "ALTER TABLE album ADD COLUMN year INTEGER NOT NULL DEFAULT 0; ALTER TABLE album DROP COLUMN legacy")
        migrator.lintMode = .warn
        let db = try Connection.inMemory()
        #expect(try migrator.migrate(db).lintFindings.map(\.rule) == [.dropColumn])
        migrator.lintMode = .off
        let other = try Connection.inMemory()
        #expect(try migrator.migrate(other).lintFindings == [])
        #expect(try other.columnNames(in: "album") == ["id", "title", "year"])
    }

    @Test func closuresAreNotLinted() throws {
        var migrator = try Self.appMigrator()
        try migrator.registerMigration("v2") { db in try db.execute("ALTER TABLE album DROP COLUMN legacy") }
        let db = try Connection.inMemory()
        #expect(try migrator.migrate(db).lintFindings == [])
    }

    @Test func mergedMigrationsLintTheStepsThatRun() throws {
        var migrator = SchemaMigrator()
        try migrator.registerMigration("v2", merging: [
            .init("v1", sql: "CREATE TABLE t(a, b)"),
            .init("v1b", sql: "ALTER TABLE t DROP COLUMN b"),
        ], sql: "CREATE TABLE u(x)")
        let db = try Connection.inMemory()
        #expect(throws: FerryError.self) { try migrator.migrate(db) }
        // A database that already applied v1b does not run (nor lint) it again.
        let old = try Connection.inMemory()
        var oldMigrator = SchemaMigrator()
        try oldMigrator.registerMigration("v1", sql: "CREATE TABLE t(a, b)")
        try oldMigrator.registerMigration("v1b", allowing: [.allow(.dropColumn, because: "test")], sql: "ALTER TABLE t DROP COLUMN b")
        try oldMigrator.migrate(old)
        #expect(try migrator.migrate(old).appliedIdentifiers == ["v2"])
    }

    @Test func lintAWholeMigratorWithoutDatabase() throws {
        var migrator = try Self.appMigrator()
        try migrator.registerMigration("v2", sql: "ALTER TABLE album RENAME COLUMN title TO name")
        try migrator.registerMigration("v3") { _ in }
        try migrator.registerMigration("v4", allowing: [.allow(.dropTableWithRows, because: "moved to archive")], sql: "DROP TABLE album")
        let result = try SchemaLint.lint(migrator)
        #expect(result.map(\.identifier) == ["v1", "v2", "v4"])
        #expect(result.map { $0.findings.map(\.rule) } == [[], [.rename], [.dropTableWithRows]])
        #expect(result[2].findings.first?.allowedBecause == "moved to archive")
    }
}

/// The lint of migration files (`SchemaLint.lint(files:...)`), what `ferry lint` runs.
@Suite(.timeLimit(.minutes(2))) struct SchemaLintFilesTests {
    @Test func lintsFilesAgainstADatabase() throws {
        let dir = Sandbox()
        let dbPath = dir.path("app.sqlite")
        do {
            let db = try Connection(path: dbPath)
            try db.execute("CREATE TABLE album(id INTEGER PRIMARY KEY, legacy TEXT); CREATE TABLE empty(x); INSERT INTO album VALUES (1, 'x')")
        }
        let safe = dir.path("safe.sql"), unsafe = dir.path("unsafe.sql")
        try "DROP TABLE empty; ALTER TABLE album ADD COLUMN year INTEGER".write(toFile: safe, atomically: true, encoding: .utf8)
        try "DROP TABLE album;\nALTER TABLE album RENAME COLUMN legacy TO old".write(toFile: unsafe, atomically: true, encoding: .utf8)

        let ok = try SchemaLint.lint(files: [.file(safe)], databasePath: dbPath)
        #expect(ok.files.map(\.name) == [safe])
        #expect(ok.findings.isEmpty && ok.refusals == 0)

        let refused = try SchemaLint.lint(files: [.file(safe), .file(unsafe)], databasePath: dbPath)
        #expect(refused.files.map(\.name) == [safe, unsafe])
        #expect(refused.files[1].findings.map(\.rule) == [.dropTableWithRows, .rename])
        #expect(refused.refusals == 1 && refused.warnings == 1)
        #expect("\(refused.files[1].findings[0])".hasPrefix("[drop-table-with-rows] refused: `DROP TABLE album` - Table album holds rows"))

        let allowed = try SchemaLint.lint(files: [.file(unsafe)], databasePath: dbPath, allowances: [.allow(.dropTableWithRows, because: "archived")])
        #expect(allowed.refusals == 0)
        #expect(allowed.findings.first?.allowedBecause == "archived")

        // Without the database, the data-dependent rule cannot know the table holds rows.
        let offline = try SchemaLint.lint(files: [.file(unsafe)])
        #expect(offline.findings.map(\.rule).contains(.rename))
    }

    @Test func lintsTextAndForeignKeyMode() throws {
        let sql = """
            CREATE TABLE p(id INTEGER PRIMARY KEY);
            CREATE TABLE c(p REFERENCES p ON DELETE CASCADE);
            INSERT INTO p VALUES (1);
            ALTER TABLE c ADD COLUMN n NOT NULL;
            """
        let report = try SchemaLint.lint(files: [.text(sql, name: "-")], foreignKeyChecks: .immediate)
        #expect(report.files.map(\.name) == ["-"])
        #expect(report.refusals == 1)
        #expect(report.findings.first { $0.isRefusal }?.rule == .addNotNullColumnWithoutDefault)
    }

    @Test func badInputIsATypedError() {
        #expect(throws: FerryError.fileNotFound(path: "/nonexistent/x.sql")) { try SchemaLint.lint(files: [.file("/nonexistent/x.sql")]) }
        #expect(throws: FerryError.self) { try SchemaLint.lint(files: [.text("SELECT 1", name: "x")], databasePath: "/nonexistent/db") }
    }

    /// A NUL byte (SQLite stops reading there) or bytes that are not UTF-8 used to hide every
    /// statement of the file from the lint (0 findings, a pass); now the file is an input error
    /// naming the byte offset.
    @Test func unreadableBytesAreAnInputErrorNeverAPass() throws {
        let dir = Sandbox()
        func lintBytes(_ bytes: [UInt8]) throws(FerryError) -> SchemaLintReport {
            let path = dir.path("m.sql")
            FileManager.default.createFile(atPath: path, contents: Data(bytes))
            return try SchemaLint.lint(files: [.file(path)])
        }
        let drops = Array("DROP TABLE users;\nDROP TABLE x".utf8)  // 30 bytes
        for (bytes, offset) in [(drops + [0] + Array(";\n".utf8), 30), ([0xFF] + drops, 0), (drops + [0xC3, 0x28], 30),
                                (Array("-- é\n".utf8) + drops + [0xE2, 0x82], 36)] {
            do {
                let report = try lintBytes(bytes)
                Issue.record("passed with \(report.findings.count) finding(s): \(bytes)")
            } catch {
                guard case .unreadableSQL(let name, let at, let reason) = error else { Issue.record("\(error)"); continue }
                #expect(name == dir.path("m.sql") && at == offset && !reason.isEmpty, "\(error)")
                #expect(error.description.contains("byte offset \(offset)"), "\(error)")
            }
        }
        // Text given directly: only a NUL can be wrong in it.
        #expect { try SchemaLint.lint("DROP TABLE users; DROP TABLE x\u{0};") } throws: { error in
            if case FerryError.unreadableSQL(_, 30, _) = error { return true }
            return false
        }
        #expect { try SchemaLint.lint(files: [.text("DROP TABLE users;\u{0}", name: "-")]) } throws: { error in
            if case FerryError.unreadableSQL("-", 17, _) = error { return true }
            return false
        }
        var migrator = SchemaMigrator()
        try migrator.registerMigration("v1", sql: "DROP TABLE users;\u{0}DROP TABLE x;")
        #expect(throws: FerryError.self) { try SchemaLint.lint(migrator) }
        // Valid UTF-8 beyond ASCII still lints.
        #expect(try lintBytes(Array("-- café ☕\nDROP TABLE users;".utf8)).refusals == 1)
        // A script SQLite cannot read from some point on (a stray backtick, a byte-order mark, an
        // unterminated string) is an input error naming where, never a pass.
        for (bytes, offset) in [(drops + Array(";\n`".utf8), 32), ([0xEF, 0xBB, 0xBF] + drops, 0), (drops + Array("; SELECT 'open".utf8), 39)] {
            do {
                let report = try lintBytes(bytes)
                Issue.record("passed with \(report.findings.count) finding(s): \(String(decoding: bytes, as: UTF8.self))")
            } catch {
                guard case .unreadableSQL(let name, let at, _) = error else { Issue.record("\(error)"); continue }
                #expect(name == dir.path("m.sql") && at == offset, "\(error)")
            }
        }
    }
}
