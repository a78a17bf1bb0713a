import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// `FerryDatabase.erase()`: refused while a table migrates (nothing erased); after the migration
/// finished, the target is emptied (Ferry's catalog and the migrator's history with it), the open
/// handle reads an empty schema and writes a new one, and a plan registers again from nothing,
/// plain and encrypted.
@Suite(.timeLimit(.minutes(1))) struct EraseTests {
    static func cipher(_ encrypted: Bool) -> Cipher? {
        encrypted ? .passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
    }

    @Test(arguments: [false, SQLiteEngine.supportsEncryption])
    func eraseIsRefusedWhileATableMigrates(encrypted: Bool) async throws {
        let box = Sandbox()
        let cipher = Self.cipher(encrypted)
        let legacy = try box.makeLegacy(rows: 30, cipher: cipher)
        let db = try FerryDatabase(path: box.path("app.db"), configuration: .init(cipher: cipher), plan: .messages(from: legacy, cipher: cipher),
                                   options: .fixedBatches(of: 10))
        defer { db.close() }
        _ = try await db.step()
        try await db.write { db throws(FerryError) in try db.execute("CREATE TABLE notes(x)") }
        for form in ["sync", "async"] {
            do {
                if form == "sync" { try eraseBlocking(db) } else { try await db.erase() }
                Issue.record("\(form): erased while messages migrates")
            } catch {
                guard case .unsupportedDuringMigration(let table, let statement, _) = error else { Issue.record("\(form): \(error)"); continue }
                #expect(table == "messages" && statement == "erase()", "\(form)")
            }
        }
        // Nothing was erased: the migration goes on and finishes with every row.
        #expect(try await db.read { db throws(FerryError) in try db.scalar("SELECT count(*) FROM messages", as: Int.self) } == 30)
        #expect(try await db.read { db throws(FerryError) in try db.scalar("SELECT count(*) FROM notes", as: Int.self) } == 0)
        try await db.migrateAll()
        #expect(try db.isMigrated)
        #expect(try await db.read { db throws(FerryError) in try db.fetchAll("SELECT id FROM messages ORDER BY id") }.count == 30)
    }

    @Test(arguments: [false, SQLiteEngine.supportsEncryption])
    func eraseEmptiesAFinishedDatabaseThatKeepsWorking(encrypted: Bool) throws {
        let box = Sandbox()
        let cipher = Self.cipher(encrypted)
        let legacy = try box.makeLegacy(rows: 30, cipher: cipher)
        let path = box.path("app.db")
        let db = try FerryDatabase(path: path, configuration: .init(cipher: cipher), plan: .messages(from: legacy, cipher: cipher),
                                   options: .fixedBatches(of: 10))
        defer { db.close() }
        var migrator = SchemaMigrator()
        try migrator.registerMigration("notes") { db in
            try db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT); CREATE INDEX notes_body ON notes(body)")
            try db.execute("CREATE VIEW recent AS SELECT * FROM notes; CREATE TRIGGER notes_touch AFTER INSERT ON notes BEGIN SELECT 1; END")
        }
        try db.migrateSchema(migrator)
        try db.write { db throws(FerryError) in
            try db.execute("INSERT INTO notes(body) VALUES ('a'), ('b')")
            try db.execute("PRAGMA user_version = 7")
        }
        // The table finishes; its source's cleanup has not begun (the legacy file holds every row).
        while try !db.isMigrated { try db.step() }
        #expect(try db.read { db throws(FerryError) in try db.scalar("SELECT count(*) FROM sqlite_master", as: Int.self) }! > 0)

        try db.erase()

        // The schema is empty for the writer and the readers (but SQLite's own sqlite_sequence,
        // emptied); Ferry's catalog and the migrator's history went with it.
        let schema = "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite%'"
        let objects = try db.read { db throws(FerryError) in try db.fetchAll(schema) }
        #expect(objects.isEmpty, "\(objects)")
        #expect(try db.read { db throws(FerryError) in try db.scalar("PRAGMA user_version", as: Int.self) } == 0)
        #expect(try db.write { db throws(FerryError) in try db.fetchAll(schema) }.isEmpty)
        #expect(try db.isMigrated && db.progress().tables.isEmpty)
        #expect(try db.read { db throws(FerryError) in try migrator.appliedIdentifiers(db) }.isEmpty)
        #expect(try FerryDatabase.registeredTables(atPath: path, configuration: .init(cipher: cipher)) == nil)
        // The legacy file is left as it was: its moved rows are still there.
        let source = try Connection(path: legacy, configuration: .init(cipher: cipher))
        #expect(try source.scalar("SELECT count(*) FROM messages", as: Int.self) == 30)
        source.close()

        // The handle keeps working: the migrator applies its migrations again (AUTOINCREMENT starts
        // over), and a plan registers from nothing and migrates the legacy rows again.
        try db.migrateSchema(migrator)
        try db.write { db throws(FerryError) in try db.execute("INSERT INTO notes(body) VALUES ('c')") }
        #expect(try db.read { db throws(FerryError) in try db.scalar("SELECT id FROM notes WHERE body = 'c'", as: Int.self) } == 1)
        try db.register(.messages(from: legacy, cipher: cipher))
        #expect(try !db.isMigrated)
        try db.step()
        #expect(try db.read { db throws(FerryError) in try db.scalar("SELECT count(*) FROM messages", as: Int.self) } == 30)
        try db.migrateAllBlocking()
        #expect(try db.isMigrated)
        #expect(try db.verify().isConsistent)
        #expect(try db.read { db throws(FerryError) in try db.fetchAll("SELECT id FROM messages") }.count == 30)
        db.close()

        // Reopened, the database holds the new state only.
        let reopened = try FerryDatabase(path: path, configuration: .init(cipher: cipher))
        defer { reopened.close() }
        #expect(try reopened.progress().tables.map(\.name) == ["messages"] && reopened.isMigrated)
        #expect(try reopened.read { db throws(FerryError) in try db.scalar("SELECT count(*) FROM notes", as: Int.self) } == 1)
    }

    /// The blocking form from an async test (which would pick the async one).
    private func eraseBlocking(_ db: FerryDatabase) throws(FerryError) { try db.erase() }
}
