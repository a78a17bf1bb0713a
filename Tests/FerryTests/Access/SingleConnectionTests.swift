import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// Single-connection mode (`Options(maximumReaderCount: 0)`) and in-memory targets: reads run on
/// the writer, one at a time with writes and steps, and write nothing; a migrating table reads,
/// writes, steps, is observed and verifies as with readers, plain and encrypted.
@Suite(.timeLimit(.minutes(1))) struct SingleConnectionTests {
    static func options() -> FerryDatabase.Options {
        var options = FerryDatabase.Options.fixedBatches(of: 10)
        options.maximumReaderCount = 0
        return options
    }

    @Test(arguments: [false, SQLiteEngine.supportsEncryption])
    func aMigratingTableWorksOnOneConnection(encrypted: Bool) throws {
        let box = Sandbox()
        let cipher: Cipher? = encrypted ? .passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
        let legacy = try box.makeLegacy(rows: 40, cipher: cipher)
        let db = try FerryDatabase(path: box.path("app.db"), configuration: .init(cipher: cipher), plan: .messages(from: legacy, cipher: cipher),
                                   options: Self.options())
        defer { db.close() }
        try checkMigratingTable(db)
    }

    @Test func anInMemoryTargetMigratesItsOwnTables() throws {
        let db = try FerryDatabase(path: ":memory:", options: .fixedBatches(of: 10))
        defer { db.close() }
        try db.write { db throws(FerryError) in
            try db.execute("CREATE TABLE legacy_messages(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, body TEXT)")
            try db.execute("""
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 40)
                INSERT INTO legacy_messages SELECT x, x % 3, 'message ' || x FROM n
                """)
        }
        try db.register(MigrationPlan(sources: [MigrationSource(.targetFile, tables: [TableMapping(target: "messages", source: "legacy_messages")])]))
        try checkMigratingTable(db)
    }

    /// Cleanup would delete the moved rows from the file while their only copy is in memory.
    @Test(arguments: [":memory:", ""])
    func anInMemoryTargetRefusesSourceFiles(path: String) throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 10)
        #expect { try FerryDatabase(path: path, plan: .messages(from: legacy)) } throws: { error in
            guard case .unsupported(let message)? = error as? FerryError else { return false }
            return message.contains(legacy)
        }
        let db = try FerryDatabase(path: path)
        defer { db.close() }
        #expect(throws: FerryError.self) { try db.register(.messages(from: legacy)) }
        #expect(try db.progress().tables.isEmpty)
    }

    /// Steps, reads, writes, a refused write in a read, a read in a write, verify and the end of
    /// the migration, on a database whose reads run on its writer.
    private func checkMigratingTable(_ db: FerryDatabase) throws {
        // Reads run on the writer (its cache size is the writer's, not a reader's).
        #expect(try db.read { db throws(FerryError) in try db.scalar("PRAGMA main.cache_size", as: Int.self) } == MigrationEngine.writerCacheSize)
        try db.step()  // ids 1-10 moved
        try db.write { db throws(FerryError) in
            try db.execute("INSERT INTO messages(id, conversation_id, body) VALUES (41, 0, 'new')")
            try db.execute("UPDATE messages SET body = 'edited' WHERE id IN (5, 25)")
            #expect(db.changes == 2)
            try db.execute("DELETE FROM messages WHERE id = 30")
        }
        try db.step()
        let ids = (1...41).filter { $0 != 30 }.map(Int64.init)
        let read = { () throws(FerryError) -> [[Value]] in
            try db.read { db throws(FerryError) in try db.fetchAll("SELECT id, body FROM messages ORDER BY id").map(\.values) }
        }
        #expect(try read().map { $0[0] } == ids.map(Value.integer))
        #expect(try read().filter { $0[1] == .text("edited") }.map { $0[0] } == [.integer(5), .integer(25)])

        // A read writes nothing, on a migrating table or another one; a read inside a write is refused.
        try db.write { db throws(FerryError) in try db.execute("CREATE TABLE notes(x)") }
        for sql in ["INSERT INTO notes VALUES (1)", "DELETE FROM messages WHERE id = 1", "UPDATE messages SET body = 'x' WHERE id = 35",
                    "CREATE TABLE more(x)"] {
            do {
                try db.read { db throws(FerryError) in try db.execute(sql) }
                Issue.record("\(sql) ran in read { }")
            } catch {
                #expect(error.resultCode?.primary == .readonly || error.isMisuse, "\(sql): \(error)")
            }
        }
        #expect(try db.read { db throws(FerryError) in try db.scalar("SELECT count(*) FROM notes", as: Int.self) } == 0)
        #expect(try db.read { db throws(FerryError) in try db.scalar("SELECT count(*) FROM messages", as: Int.self) } == 40)
        do {
            try db.write { _ throws(FerryError) in _ = try db.read { db throws(FerryError) in try db.fetchAll("SELECT 1") } }
            Issue.record("a read ran inside a write")
        } catch {
            #expect(error.isMisuse, "\(error)")
        }

        #expect(try db.verify().isConsistent)
        try db.migrateAllBlocking()
        #expect(try db.isMigrated && db.progress().tables.allSatisfy { $0.state == .finished })
        #expect(try read().map { $0[0] } == ids.map(Value.integer))
        #expect(try db.verify().isConsistent)
    }

    @Test func observeAndAsyncAccessRunOnTheWriter() async throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 20)
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: legacy), options: Self.options())
        defer { db.close() }
        _ = try await db.step()
        var updates = db.observe("SELECT count(*) FROM messages WHERE conversation_id = 0").makeAsyncIterator()
        #expect(try await updates.next() == [Row(columnNames: ["count(*)"], values: [.integer(6)])])
        try await db.write { db throws(FerryError) in try db.execute("INSERT INTO messages(id, conversation_id, body) VALUES (21, 0, 'x')") }
        #expect(try await updates.next() == [Row(columnNames: ["count(*)"], values: [.integer(7)])])
        _ = try await db.migrateAll()
        #expect(try await db.read { db throws(FerryError) in try db.scalar("SELECT count(*) FROM messages", as: Int.self) } == 21)
    }

    @Test func aNegativeReaderCountIsRefused() {
        var options = FerryDatabase.Options()
        options.maximumReaderCount = -1
        #expect(throws: FerryError.invalidArguments("maximumReaderCount is -1: at least 1, or 0 to read on the writer")) {
            try FerryDatabase(path: Sandbox().path("app.db"), options: options)
        }
    }
}

extension FerryError {
    /// True for `.misuse`.
    var isMisuse: Bool { if case .misuse = self { return true } else { return false } }
}
