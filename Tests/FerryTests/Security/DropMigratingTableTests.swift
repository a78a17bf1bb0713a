import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// `DROP TABLE T` of a migrating target does what it does to a finished table: every row of `T`
/// goes, the source rows not moved yet included (rows outside the filter stay in the source).
/// The table's migration ends; the plan's other tables go on; the database keeps opening (also
/// with the same plan, which does not bring `T` back), stepping and verifying.
@Suite(.timeLimit(.minutes(2))) struct DropMigratingTableTests {
    /// `app.db` with `messages` (filter: conversation_id < 2, from legacy.db's 40 rows) and
    /// `notes` (all 30 rows of legacy.db's `notes`) migrating.
    final class World {
        let box = Sandbox()
        let legacy: String
        let cipher: Cipher?
        let plan: MigrationPlan

        init(encrypted: Bool = false, sameFile: Bool = false) throws {
            cipher = encrypted ? .passphrase("drop", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
            if sameFile {
                legacy = box.path("app.db")
                try box.makeLegacy(rows: 40, name: "app.db", cipher: cipher, table: "old_messages")
                try box.makeLegacy(rows: 30, name: "app.db", cipher: cipher, table: "old_notes")
                plan = MigrationPlan(sources: [MigrationSource(.targetFile, tables: [
                    TableMapping(target: "messages", source: "old_messages", filter: "conversation_id < 2"),
                    TableMapping(target: "notes", source: "old_notes"),
                ])])
            } else {
                legacy = try box.makeLegacy(rows: 40, cipher: cipher)
                try box.makeLegacy(rows: 30, name: "legacy.db", cipher: cipher, table: "notes")
                plan = MigrationPlan(sources: [MigrationSource(.file(legacy), cipher: cipher, tables: [
                    TableMapping(target: "messages", source: "messages", filter: "conversation_id < 2"),
                    TableMapping(target: "notes", source: "notes"),
                ])])
            }
        }

        func open(plan: MigrationPlan? = nil) throws -> FerryDatabase {
            try FerryDatabase(path: box.path("app.db"), configuration: .init(cipher: cipher), plan: plan ?? self.plan,
                              options: .fixedBatches(of: 7))
        }

        var sourceMessagesTable: String { legacy == box.path("app.db") ? "old_messages" : "messages" }
        var sourceNotesTable: String { legacy == box.path("app.db") ? "old_notes" : "notes" }

        /// The source rows of `table` left in the source file (nil once the table was dropped).
        func sourceRows(_ table: String) throws -> [Int]? {
            let db = try Connection(path: legacy, configuration: .init(cipher: cipher))
            defer { db.close() }
            guard try db.scalar("SELECT count(*) FROM sqlite_master WHERE name = ?", [.text(table)], as: Int.self) == 1 else { return nil }
            return try db.fetchAll("SELECT id FROM \(table) ORDER BY id").map { try $0.get(0, as: Int.self) }
        }
    }

    static var placements: [(encrypted: Bool, sameFile: Bool)] {
        var cases = [(false, false), (false, true)]
        if SQLiteEngine.supportsEncryption { cases += [(true, false), (true, true)] }
        return cases
    }

    @Test(arguments: 0..<placements.count) func dropEndsTheTablesMigrationAndTheDatabaseStaysHealthy(placement: Int) throws {
        let (encrypted, sameFile) = Self.placements[placement]
        let world = try World(encrypted: encrypted, sameFile: sameFile)
        do {
            let db = try world.open()
            _ = try db.step()
            _ = try db.step()
            try db.write { try $0.execute("DROP TABLE messages") }
            #expect(throws: FerryError.self) { try db.read { _ = try $0.fetchAll("SELECT * FROM messages") } }
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'messages'", as: Int.self) } == 0)
            // The other table goes on and finishes; cleanup deletes what must go.
            try db.migrateAllBlocking()
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM notes", as: Int.self) } == 30)
            #expect(try db.isMigrated)
            let verification = try db.verify()
            #expect(verification.isConsistent, "\(verification)")
            db.close()
        }
        // Rows outside the filter stay in the source; the ones the dropped table owned are gone.
        let left = try world.sourceRows(world.sourceMessagesTable)
        #expect(left == (1...40).filter { $0 % 3 >= 2 }, "\(String(describing: left))")
        #expect(try world.sourceRows(world.sourceNotesTable) == nil)
        // Every later open works: without a plan, and with the same plan, which does not bring the table back.
        for plan in [nil, world.plan] {
            let again = try FerryDatabase(path: world.box.path("app.db"), configuration: .init(cipher: world.cipher), plan: plan)
            #expect(try again.isMigrated)
            #expect(try again.step() == nil)
            #expect(try again.read { try $0.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'messages'", as: Int.self) } == 0)
            let progress = try again.progress()
            #expect(progress.tables.map(\.name).sorted() == ["messages", "notes"])
            #expect(try again.verify().isConsistent)
            again.close()
        }
    }

    /// Dropped and re-created in one transaction, or dropped in a transaction that rolls back.
    @Test func dropInsideTransactions() throws {
        let world = try World()
        let db = try world.open()
        _ = try db.step()
        #expect(throws: FerryError.self) {
            try db.write { db in
                try db.execute("DROP TABLE messages")
                throw FerryError.misuse("roll back")
            }
        }
        // Rolled back: the table migrates on, with every row.
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 27)
        try db.write { db in
            try db.execute("DROP TABLE messages")
            try db.execute("CREATE TABLE messages(id INTEGER PRIMARY KEY, body TEXT)")
            try db.execute("INSERT INTO messages VALUES (1, 'fresh')")
        }
        // The new table is the app's own: no migration feeds it.
        #expect(try db.read { try $0.fetchAll("SELECT id, body FROM messages").map(\.values) } == [[1, "fresh"]])
        try db.migrateAllBlocking()
        #expect(try db.read { try $0.fetchAll("SELECT id, body FROM messages").map(\.values) } == [[1, "fresh"]])
        db.close()
        let again = try world.open()
        #expect(try again.read { try $0.fetchAll("SELECT id, body FROM messages").map(\.values) } == [[1, "fresh"]])
        #expect(try again.isMigrated)
    }
}
