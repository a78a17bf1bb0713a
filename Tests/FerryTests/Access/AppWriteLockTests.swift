import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// The app's write transaction takes main's write lock at once (as `BEGIN IMMEDIATE`), but not the
/// write locks of Ferry's sources, which the app never writes: another process writing a source
/// file does not hold up the app's writes, nor do they hold it up. Databases the app attached
/// itself are still locked at once.
@Suite(.timeLimit(.minutes(1)))
struct AppWriteLockTests {
    /// True when a connection of its own can begin a write transaction on `path` right now.
    private func canWrite(_ path: String) throws -> Bool {
        let other = try Connection(path: path, configuration: .init(busyTimeout: .zero))
        defer { other.close() }
        do {
            try other.execute("BEGIN IMMEDIATE")
        } catch let error where error.resultCode.primary == .busy {
            return false
        }
        try other.execute("ROLLBACK")
        return true
    }

    @Test(arguments: [false, true])
    func theAppsWriteLocksMainAtOnceAndNotTheSource(encrypted: Bool) throws {
        let box = Sandbox()
        let cipher: Cipher? = encrypted && SQLiteEngine.supportsEncryption ? .passphrase("legacy key") : nil
        let legacy = try box.makeLegacy(rows: 50, cipher: cipher)
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), cipher: cipher, tables: [TableMapping(target: "messages", source: "messages")])])
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .fixedBatches(of: 10))
        defer { db.close() }
        _ = try db.step()  // rows 1-10 moved, 11-50 pending
        let target = box.path("app.db")
        let otherConnection: (String) throws -> Connection = { path in
            try Connection(path: path, configuration: .init(cipher: path == legacy ? cipher : nil, busyTimeout: .zero))
        }
        try db.write { app in
            // Before the app's first statement, main is locked for writing; the source is not.
            #expect(try !canWrite(target))
            let source = try otherConnection(legacy)
            defer { source.close() }
            try source.execute("BEGIN IMMEDIATE")
            try source.execute("ROLLBACK")
            // The app reads, then writes (a pending row moves ahead of the update): nothing waits.
            let pending = try #require(try app.scalar("SELECT max(id) FROM messages", as: Int64.self))
            try app.execute("UPDATE messages SET body = 'changed' WHERE id = ?", [.integer(pending)])
            #expect(app.changes == 1)
            #expect(try !canWrite(target))
        }
        #expect(try canWrite(target))
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages WHERE body = 'changed'", as: Int.self) } == 1)
        // The target file holds the batch and the row the update moved ahead.
        let raw = try Connection(path: target)
        #expect(try raw.scalar("SELECT count(*) FROM messages", as: Int.self) == 11)
        raw.close()
        try db.migrateAllBlocking()
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 50)
        #expect(try db.verify().isConsistent)
    }

    /// A database the app attached itself (here by the connection's setup statements) is locked
    /// at the start of the write, as before.
    @Test func aDatabaseTheAppAttachedIsLockedAtOnce() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 20)
        let auxiliary = box.path("aux.db")
        let setup = try Connection(path: auxiliary)
        try setup.execute("PRAGMA journal_mode = WAL; CREATE TABLE notes(x)")
        setup.close()
        var configuration = Connection.Configuration()
        configuration.prepareStatements = ["ATTACH DATABASE '\(auxiliary)' AS aux"]
        let db = try FerryDatabase(path: box.path("app.db"), configuration: configuration, plan: .messages(from: legacy))
        defer { db.close() }
        try db.write { app in
            #expect(try !canWrite(auxiliary))
            #expect(try !canWrite(box.path("app.db")))
            try app.execute("INSERT INTO aux.notes VALUES (1)")
        }
        #expect(try canWrite(auxiliary))
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM aux.notes", as: Int.self) } == 1)
    }
}
