import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// A source file with a rollback journal goes to WAL when a plan registers it (its reads of pending
/// rows then cost a lock in shared memory instead of file locks and header reads), unless the source
/// keeps its journal mode; the rows read and moved are the same either way.
@Suite(.timeLimit(.minutes(2))) struct SourceJournalTests {
    static var placements: [Bool] { SQLiteEngine.supportsEncryption ? [false, true] : [false] }

    static func cipher(encrypted: Bool) -> Cipher? {
        encrypted ? .passphrase("journal-key", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
    }

    /// The journal mode of the file at `path`, as a connection that changes nothing reads it.
    static func journalMode(of path: String, cipher: Cipher?) throws -> String {
        let db = try Connection(path: path, configuration: .init(cipher: cipher, journalMode: .keep))
        defer { db.close() }
        return try db.scalar("PRAGMA journal_mode", as: String.self) ?? ""
    }

    /// Reads the migrating table half-way (a write through it too), then migrates to the end.
    static func expectSameRows(on db: FerryDatabase, rows: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        _ = try db.step()
        try db.write { try $0.execute("UPDATE messages SET body = 'changed' WHERE id = ?", [.integer(Int64(rows))]) }
        let expected = (1...rows).map { id in [Value.integer(Int64(id)), .integer(Int64(id % 3)), .text(id == rows ? "changed" : "message \(id)")] }
        let read = { try db.read { try $0.fetchAll("SELECT id, conversation_id, body FROM messages ORDER BY id").map(\.values) } }
        #expect(try read() == expected, sourceLocation: sourceLocation)
        try db.migrateAllBlocking()
        #expect(try read() == expected, sourceLocation: sourceLocation)
    }

    @Test(arguments: placements) func aRollbackJournalSourceGoesToWALWhenRegistered(encrypted: Bool) throws {
        let box = Sandbox()
        let cipher = Self.cipher(encrypted: encrypted)
        let legacy = try box.makeLegacy(rows: 300, cipher: cipher, journalMode: .delete)
        #expect(try Self.journalMode(of: legacy, cipher: cipher) == "delete")
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), cipher: cipher, tables: [TableMapping(target: "messages", source: "messages")])])
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .fixedBatches(of: 100))
        defer { db.close() }
        #expect(try Self.journalMode(of: legacy, cipher: cipher) == "wal")
        try Self.expectSameRows(on: db, rows: 300)
    }

    @Test(arguments: placements) func aSourceThatKeepsItsJournalModeStaysInIt(encrypted: Bool) throws {
        let box = Sandbox()
        let cipher = Self.cipher(encrypted: encrypted)
        let legacy = try box.makeLegacy(rows: 300, cipher: cipher, journalMode: .delete)
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), cipher: cipher, tables: [TableMapping(target: "messages", source: "messages")],
                                                           keepsJournalMode: true)])
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .fixedBatches(of: 100))
        defer { db.close() }
        #expect(try Self.journalMode(of: legacy, cipher: cipher) == "delete")
        try Self.expectSameRows(on: db, rows: 300)
        #expect(try Self.journalMode(of: legacy, cipher: cipher) == "delete")
    }

    /// The switch needs the file alone for a moment: while another connection reads it, the
    /// registration goes on at once and the file keeps its journal. The registration's transaction
    /// takes main's write lock only (with `BEGIN IMMEDIATE`, the source's too, its commit failed
    /// with SQLITE_BUSY after the busy timeout), with or without a catalog already there.
    @Test(arguments: [false, true]) func aSourceAnotherConnectionReadsIsRegisteredAndKeepsItsJournal(catalogFirst: Bool) throws {
        let box = Sandbox()
        let configuration = DatabaseConfiguration(busyTimeout: .seconds(30))
        var plan = MigrationPlan.messages(from: try box.makeLegacy(rows: 300, journalMode: .delete))
        let legacy = box.path("legacy.db")
        if catalogFirst {
            let first = MigrationSource(.file(try box.makeLegacy(rows: 20, name: "first.db", table: "older")),
                                        tables: [TableMapping(target: "older", source: "older")])
            try FerryDatabase(path: box.path("app.db"), configuration: configuration, plan: MigrationPlan(sources: [first])).close()
            plan.add(first)
        }
        let other = try Connection(path: legacy, configuration: .init(busyTimeout: .seconds(30), journalMode: .keep))
        defer { other.close() }
        try other.execute("BEGIN")
        #expect(try other.scalar("SELECT count(*) FROM messages", as: Int.self) == 300)
        let start = ContinuousClock.now
        let db = try FerryDatabase(path: box.path("app.db"), configuration: configuration, plan: plan, options: .fixedBatches(of: 100))
        defer { db.close() }
        // Far below the 30 s busy timeout: nothing waited for the reader.
        #expect(ContinuousClock.now - start < .seconds(15))
        try other.execute("COMMIT")
        #expect(try Self.journalMode(of: legacy, cipher: nil) == "delete")
        try Self.expectSameRows(on: db, rows: 300)
    }

    /// A source registered earlier and kept in rollback-journal mode goes to WAL when a later
    /// registration no longer keeps it: the next launch's, or one on the open database while a
    /// reader has the source attached (it sees WAL at its next read).
    @Test(arguments: [false, true]) func aRegisteredSourceGoesToWALWhenThePlanNoLongerKeepsItsJournal(onTheOpenDatabase: Bool) throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 300, journalMode: .delete)
        let kept = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [TableMapping(target: "messages", source: "messages")],
                                                           keepsJournalMode: true)])
        var db = try FerryDatabase(path: box.path("app.db"), plan: kept, options: .fixedBatches(of: 100))
        defer { db.close() }
        _ = try db.step()
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 300)
        #expect(try Self.journalMode(of: legacy, cipher: nil) == "delete")
        if onTheOpenDatabase {
            try db.register(.messages(from: legacy))
        } else {
            db.close()
            db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: legacy), options: .fixedBatches(of: 100))
        }
        #expect(try Self.journalMode(of: legacy, cipher: nil) == "wal")
        try Self.expectSameRows(on: db, rows: 300)
    }

    @Test func aRefusedPlanLeavesTheJournalModeAsItWas() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 10, journalMode: .delete)
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [TableMapping(target: "messages", source: "no_such_table")])])
        #expect(throws: FerryError.self) { try FerryDatabase(path: box.path("app.db"), plan: plan).close() }
        #expect(try Self.journalMode(of: legacy, cipher: nil) == "delete")
    }

    /// A source already in WAL stays in WAL, and a same-file source (the target file) needs nothing.
    @Test func aWALSourceIsLeftAsItIs() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 50)
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: legacy), options: .fixedBatches(of: 20))
        defer { db.close() }
        #expect(try Self.journalMode(of: legacy, cipher: nil) == "wal")
        try Self.expectSameRows(on: db, rows: 50)
    }
}
