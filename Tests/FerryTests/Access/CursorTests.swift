import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// `fetchCursor`: a query's rows one at a time, through Ferry's rewrite (a migrating table reads
/// as the finished one: moved rows, pending ones, the app's writes), on readers and on the
/// writer, plain and encrypted; a cursor or handle used after its closure throws a typed error and
/// no longer holds its snapshot; statements that write are refused.
@Suite(.timeLimit(.minutes(1))) struct CursorTests {
    struct Message: Decodable, Equatable {
        var id: Int64
        var conversationId: Int
        var body: String
    }

    @Test(arguments: [false, SQLiteEngine.supportsEncryption])
    func cursorsReadAMigratingTableAsTheFinishedOne(encrypted: Bool) throws {
        let box = Sandbox()
        let cipher: Cipher? = encrypted ? .passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
        let legacy = try box.makeLegacy(rows: 50, cipher: cipher)
        let db = try FerryDatabase(path: box.path("app.db"), configuration: .init(cipher: cipher), plan: .messages(from: legacy, cipher: cipher),
                                   options: .fixedBatches(of: 10))
        defer { db.close() }
        try db.step()  // ids 1-10 moved, 11-50 pending
        try db.write { db throws(FerryError) in
            try db.execute("INSERT INTO messages(id, conversation_id, body) VALUES (51, 0, 'new')")
            try db.execute("UPDATE messages SET body = 'edited' WHERE id IN (5, 25)")  // a moved row and a pending one
            try db.execute("DELETE FROM messages WHERE id = 40")
        }
        let expected = (1...51).filter { $0 != 40 }.map { id in
            Message(id: Int64(id), conversationId: id == 51 ? 0 : id % 3, body: [5, 25].contains(id) ? "edited" : id == 51 ? "new" : "message \(id)")
        }

        for round in ["migrating", "finished"] {
            // A reader: rows, then records with forEach.
            let rows = try db.read { db throws(FerryError) in
                let cursor = try db.fetchCursor("SELECT id, conversation_id AS conversationId, body FROM messages WHERE id > ? ORDER BY id", [0])
                var rows: [Row] = []
                while let row = try cursor.next() { rows.append(row) }
                #expect(try cursor.next() == nil)  // exhausted stays exhausted
                return rows
            }
            #expect(try rows.map { row throws(FerryError) in try row.decode(Message.self) } == expected, "\(round)")
            let records = try db.read { db throws(FerryError) in
                var records: [Message] = []
                try db.fetchCursor(Message.self, "SELECT * FROM messages ORDER BY id", keys: .snakeCase).forEach { records.append($0) }
                return records
            }
            #expect(records == expected, "\(round)")

            // The writer: the transaction's own writes are seen; a second cursor and a fetchAll of
            // the same SQL between its rows do not disturb a cursor.
            try db.write { db throws(FerryError) in
                try db.execute("INSERT INTO messages(id, conversation_id, body) VALUES (52, 1, 'in this write')")
                let sql = "SELECT * FROM messages WHERE conversation_id = 1 ORDER BY id"
                let first = try db.fetchCursor(Message.self, sql, keys: .snakeCase)
                let second = try db.fetchCursor(Message.self, sql, keys: .snakeCase)
                var interleaved: [Int64] = []
                while let a = try first.next() {
                    interleaved.append(a.id)
                    _ = try db.fetchAll(sql)
                    if let b = try second.next() { interleaved.append(b.id) }
                }
                let ids = expected.filter { $0.conversationId == 1 }.map(\.id) + [52]
                #expect(interleaved == ids.flatMap { [$0, $0] }, "\(round)")
                try db.execute("DELETE FROM messages WHERE id = 52")
            }

            // A body that stops early, and the cursor's rows come as they are read: an error at row
            // 30 leaves the 29 rows before it delivered (fetchAll would deliver none).
            let (prefix, failure) = try db.read { db throws(FerryError) in
                let cursor = try db.fetchCursor("SELECT id, CASE WHEN id = 30 THEN abs(-9223372036854775807 - 1) END FROM messages ORDER BY id")
                var ids: [Int64] = []
                do throws(FerryError) {
                    while let row = try cursor.next() { ids.append(try row[0]) }
                    return (ids, nil as FerryError?)
                } catch {
                    #expect(try cursor.next() == nil)  // a failed cursor is done
                    return (ids, error)
                }
            }
            #expect(prefix == Array(1...29), "\(round)")
            #expect(failure?.resultCode?.primary == .error, "\(round): \(String(describing: failure))")
            struct Stop: Error {}
            var seen = 0
            do {
                try db.read { db in
                    try db.fetchCursor("SELECT id FROM messages").forEach { _ in
                        seen += 1
                        if seen == 3 { throw Stop() }
                    }
                }
                Issue.record("the body's error did not stop the iteration")
            } catch {
                #expect(error is Stop && seen == 3, "\(error) \(seen)")
            }

            try db.migrateAllBlocking()
        }
    }

    @Test func cursorsIterateInAsyncReadsAndWrites() async throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 30)
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: legacy), options: .fixedBatches(of: 10))
        defer { db.close() }
        try await db.step()
        let read = try await db.read { db throws(FerryError) in
            var ids: [Int64] = []
            try db.fetchCursor(Message.self, "SELECT * FROM messages ORDER BY id", keys: .snakeCase).forEach { ids.append($0.id) }
            return ids
        }
        #expect(read == Array(1...30))
        let written = try await db.write { db throws(FerryError) in
            try db.execute("DELETE FROM messages WHERE id > 20")
            let cursor = try db.fetchCursor("SELECT count(*) FROM messages")
            return try cursor.next()?[0] as Int?
        }
        #expect(written == 20)
    }

    @Test func aCursorOrHandleUsedAfterItsClosureThrowsAndHoldsNoSnapshot() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 30)
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: legacy), options: .fixedBatches(of: 10))
        defer { db.close() }
        try db.step()

        // Half-read cursors and the handles that made them, out of their closures.
        let (readCursor, reader) = try db.read { db throws(FerryError) in
            let cursor = try db.fetchCursor("SELECT id FROM messages ORDER BY id")
            _ = try cursor.next()
            return (cursor, db)
        }
        let writeCursor = try db.write { db throws(FerryError) in
            let cursor = try db.fetchCursor(Message.self, "SELECT * FROM messages", keys: .snakeCase)
            _ = try cursor.next()
            return cursor
        }
        try expectMisuse { () throws(FerryError) in _ = try readCursor.next() }
        try expectMisuse { () throws(FerryError) in _ = try writeCursor.next() }
        try expectMisuse { () throws(FerryError) in try writeCursor.forEach { _ in } }
        try expectMisuse { () throws(FerryError) in _ = try reader.fetchAll("SELECT 1") }
        try expectMisuse { () throws(FerryError) in try reader.fetchCursor("SELECT 1").forEach { _ in } }

        // The reader's snapshot ended with its closure: a checkpoint from another connection
        // copies every frame written since, and restarts the log.
        try db.write { db throws(FerryError) in try db.execute("UPDATE messages SET body = 'x' WHERE id > 20") }
        let other = try Connection(path: box.path("app.db"))
        defer { other.close() }
        let checkpoint = try #require(try other.fetchOne("PRAGMA wal_checkpoint(TRUNCATE)"))
        #expect(checkpoint[0] == .integer(0), "\(checkpoint)")  // not busy: no reader holds an older snapshot
    }

    @Test func statementsThatWriteAreRefused() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 20)
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: legacy), options: .fixedBatches(of: 10))
        defer { db.close() }
        try db.step()
        try db.write { db throws(FerryError) in try db.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)") }
        for sql in ["INSERT INTO notes(body) VALUES ('x') RETURNING id", "UPDATE messages SET body = 'x' WHERE id = 15 RETURNING id",
                    "DELETE FROM messages WHERE id = 3 RETURNING id", "CREATE TABLE more(x)"] {
            #expect(throws: FerryError.self, "\(sql)") {
                try db.write { db throws(FerryError) in _ = try db.fetchCursor(sql) }
            }
        }
        let counts = try db.read { db throws(FerryError) in
            (try db.scalar("SELECT count(*) FROM notes", as: Int.self), try db.scalar("SELECT count(*) FROM messages WHERE body = 'x'", as: Int.self),
             try db.scalar("SELECT count(*) FROM messages", as: Int.self))
        }
        #expect(counts.0 == 0 && counts.1 == 0 && counts.2 == 20)
        #expect(try db.read { db throws(FerryError) in try db.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'more'", as: Int.self) } == 0)
    }

    /// Runs `body`, which must throw the `FerryError.misuse` of a handle used after its closure.
    private func expectMisuse(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws(FerryError) -> Void) throws {
        do {
            try body()
            Issue.record("used after its closure without an error", sourceLocation: sourceLocation)
        } catch {
            guard case .misuse(let message) = error else {
                Issue.record("\(error), not misuse", sourceLocation: sourceLocation)
                return
            }
            #expect(message.contains("after the read { } or write { }"), "\(message)", sourceLocation: sourceLocation)
        }
    }
}
