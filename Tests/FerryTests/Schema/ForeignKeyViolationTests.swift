import FerryTestSupport
import FerrySQLite
import Foundation
import Synchronization
import Testing
@testable import Ferry

/// `foreignKeyViolations(in:)` and `checkForeignKeys(in:)` on the app's handle (a migrating parent's
/// pending rows are parents, as on the finished table) and on a migration's connection.
@Suite(.timeLimit(.minutes(2))) struct ForeignKeyViolationTests {
    @Test(arguments: [false, SQLiteEngine.supportsEncryption])
    func violationsCountPendingParentsAsTheFinishedTable(encrypted: Bool) throws {
        let box = Sandbox()
        let cipher: Cipher? = encrypted ? .passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
        let legacy = try box.makeLegacy(rows: 30, cipher: cipher)
        let db = try FerryDatabase(path: box.path("app.db"), configuration: .init(cipher: cipher), plan: .messages(from: legacy, cipher: cipher),
                                   options: .fixedBatches(of: 10))
        defer { db.close() }
        try db.step()  // messages 1-10 moved, 11-30 pending
        try db.write { db throws(FerryError) in
            try db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, message_id INTEGER REFERENCES messages(id), body TEXT)")
            try db.execute("CREATE TABLE tags(id INTEGER PRIMARY KEY, note_id REFERENCES notes)")
        }
        // Rows written behind the checks (another connection, foreign keys off). Parents: a moved
        // row, a pending one, and two that do not exist.
        let raw = try Connection(path: box.path("app.db"), configuration: .init(cipher: cipher))
        try raw.execute("PRAGMA foreign_keys = OFF")
        try raw.execute("INSERT INTO notes VALUES (1, 5, 'moved'), (2, 25, 'pending'), (3, 99, 'none'), (4, 0, 'none')")
        try raw.execute("INSERT INTO tags VALUES (1, 1), (2, 7)")
        raw.close()
        for round in 0..<2 {
            let violations = try db.read { db throws(FerryError) in try db.foreignKeyViolations() }
            #expect(violations.map { "\($0.table) \($0.rowid ?? -1) -> \($0.parentTable)(\($0.parentColumns.joined()))" }.sorted()
                    == ["notes 3 -> messages(id)", "notes 4 -> messages(id)", "tags 2 -> notes(id)"], "round \(round)")
            let note = try #require(violations.first { $0.table == "notes" })
            #expect(note.columns == ["message_id"])
            #expect(try note.row?.get("body", as: String.self) == "none")
            #expect(try db.read { db throws(FerryError) in try db.foreignKeyViolations(in: "tags") }.count == 1)
            #expect(try db.read { db throws(FerryError) in try db.foreignKeyViolations(in: "messages") }.isEmpty)
            #expect { try db.read { db throws(FerryError) in try db.checkForeignKeys(in: "notes") } } throws: { error in
                guard case FerryError.foreignKeyViolation(let table, _, let parent, _, let row)? = error as? FerryError else { return false }
                return table == "notes" && parent == "messages" && row.hasPrefix("rowid 3")
            }
            try db.migrateAllBlocking()
        }
        // In a migration: the same list, from the migration's connection.
        let seen = Mutex<[ForeignKeyViolation]>([])
        var migrator = SchemaMigrator()
        try migrator.registerMigration("fix", foreignKeyChecks: .immediate) { db in
            seen.withLock { $0 = (try? db.foreignKeyViolations(in: "notes")) ?? [] }
            try db.execute("DELETE FROM notes WHERE id IN (3, 4)")
            try db.execute("DELETE FROM tags WHERE id = 2")
            try db.checkForeignKeys()
        }
        _ = try db.migrateSchema(migrator)
        #expect(seen.withLock { $0.map(\.rowid) } == [3, 4])
        #expect(try db.read { db throws(FerryError) in try db.foreignKeyViolations() }.isEmpty)
    }
}
