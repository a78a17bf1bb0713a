@testable import DocSnippets
@_spi(Benchmarks) import Ferry
import FerrySQLite
import FerryTestSupport
import Foundation
import Testing

typealias Message = GettingStartedDoc.Message

/// The operations of Docs/GettingStarted.md's `MessageStore`, so that one scenario runs it and
/// `RawMessageStore`.
protocol MessageStoring: Sendable {
    init(db: FerryDatabase)
    func insert(_ message: Message) async throws -> Int64
    func message(id: Int64) async throws -> Message?
    func conversation(_ conversationId: Int) async throws -> [Message]
    func update(_ message: Message) async throws -> Bool
    func delete(id: Int64) async throws -> Bool
    func observe(conversation conversationId: Int) -> AsyncThrowingStream<[Message], any Error>
}

extension GettingStartedDoc.MessageStore: MessageStoring {}

// The same store with raw SQL and a hand-written decoding: the comparison Docs/GettingStarted.md
// counts the lines of (the struct below). Keep it as plain as the records version.
struct RawMessageStore: Sendable {
    let db: FerryDatabase

    /// Inserts `message` and returns its id (chosen by SQLite when `message.id` is nil).
    func insert(_ message: Message) async throws -> Int64 {
        try await db.write { db in
            try db.execute("INSERT INTO messages(id, conversation_id, body, sent_at) VALUES (?, ?, ?, ?)",
                           [message.id, message.conversationId, message.body, message.sentAt])
            return db.lastInsertRowid
        }
    }

    func message(id: Int64) async throws -> Message? {
        try await db.read { db in
            try db.fetchOne("SELECT id, conversation_id, body, sent_at FROM messages WHERE id = ?", [id]).map(Self.decode)
        }
    }

    func conversation(_ conversationId: Int) async throws -> [Message] {
        try await db.read { db in
            try db.fetchAll("SELECT id, conversation_id, body, sent_at FROM messages WHERE conversation_id = ? ORDER BY id", [conversationId])
                .map(Self.decode)
        }
    }

    /// Saves an edited message; false when it no longer exists.
    func update(_ message: Message) async throws -> Bool {
        try await db.write { db in
            try db.execute("UPDATE messages SET conversation_id = ?, body = ?, sent_at = ? WHERE id = ?",
                           [message.conversationId, message.body, message.sentAt, message.id])
            return db.changes > 0
        }
    }

    /// Deletes a message; false when there was none.
    func delete(id: Int64) async throws -> Bool {
        try await db.write { db in
            try db.execute("DELETE FROM messages WHERE id = ?", [id])
            return db.changes > 0
        }
    }

    /// The conversation now, then after each commit that changes it.
    func observe(conversation conversationId: Int) -> AsyncThrowingStream<[Message], any Error> {
        let rows = db.observe("SELECT id, conversation_id, body, sent_at FROM messages WHERE conversation_id = ? ORDER BY id", [conversationId])
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await batch in rows { continuation.yield(try batch.map(Self.decode)) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    private static func decode(_ row: Row) throws -> Message {
        Message(id: try row.get("id", as: Int64.self),
                conversationId: try row.get("conversation_id", as: Int.self),
                body: try row.get("body", as: String.self),
                sentAt: try row.get("sent_at", as: Date?.self))
    }
}

extension RawMessageStore: MessageStoring {}

/// Docs/GettingStarted.md's `MessageStore` (and `RawMessageStore`) used from concurrent tasks
/// while `messages` migrates: from a file of its own, plain or encrypted, or from a table of the
/// same file. Every task owns a conversation and checks it reads exactly what it wrote, whether the
/// rows it touches were moved yet or not; a step task moves small batches meanwhile.
@Suite struct MessageStoreTests {
    enum Placement: String, CaseIterable, Sendable {
        case plainFile, encryptedFile, sameFile
    }

    static let conversations = 6
    static let rows = 600
    static var placements: [Placement] {
        SQLiteEngine.supportsEncryption ? Placement.allCases : [.plainFile, .sameFile]
    }

    /// A database whose `messages` is fed by `rows` legacy messages (conversation `id % 6 + 1`),
    /// none moved yet; steps move 25 rows.
    static func migratingDatabase(_ placement: Placement, in box: Sandbox) throws -> FerryDatabase {
        let legacyCipher = Cipher.passphrase("old", settings: .sqlcipher3)
        let path = placement == .sameFile ? box.path("app.db") : box.path("legacy.db")
        let table = placement == .sameFile ? "messages_v1" : "messages"
        let legacy = try Connection(path: path, configuration: .init(cipher: placement == .encryptedFile ? legacyCipher : nil))
        try legacy.execute("CREATE TABLE \(table)(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, body TEXT NOT NULL, sent_at TEXT)")
        try legacy.execute("""
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < \(rows))
            INSERT INTO \(table) SELECT x, x % \(conversations) + 1, 'message ' || x, '2024-01-01 00:00:00.000' FROM n
            """)
        legacy.close()
        let plan = switch placement {
        case .plainFile: MigrationPlan(sources: [MigrationSource(.file(path), tables: [TableMapping(target: "messages", source: "messages")])])
        case .encryptedFile:
            MigrationPlan(sources: [MigrationSource(.file(path), cipher: legacyCipher, tables: [TableMapping(target: "messages", source: "messages")])])
        case .sameFile: MigrationPlan(sources: [MigrationSource(.targetFile, tables: [TableMapping(target: "messages", source: "messages_v1")])])
        }
        var options = FerryDatabase.Options()
        options.fixedBatchRows = 25
        return try FerryDatabase(path: box.path("app.db"), configuration: .init(cipher: placement == .encryptedFile ? .passphrase("new") : nil),
                                 plan: plan, options: options)
    }

    @Test(arguments: placements) func messageStoreDuringAMigration(_ placement: Placement) async throws {
        try await scenario(GettingStartedDoc.MessageStore.self, placement)
    }

    @Test(arguments: placements) func rawMessageStoreDuringAMigration(_ placement: Placement) async throws {
        try await scenario(RawMessageStore.self, placement)
    }

    func scenario<Store: MessageStoring>(_: Store.Type, _ placement: Placement) async throws {
        let box = Sandbox()
        let db = try Self.migratingDatabase(placement, in: box)
        defer { db.close() }
        let store = Store(db: db)

        // Before any step: every row is still in the source, and reads as if moved.
        #expect(try await store.message(id: 5)?.body == "message 5")
        #expect(try await store.conversation(3).count == Self.rows / Self.conversations)
        var updates = store.observe(conversation: 3).makeAsyncIterator()
        #expect(try await updates.next()?.count == Self.rows / Self.conversations)

        let finals = try await withThrowingTaskGroup(of: (Int, [Message])?.self) { group in
            group.addTask {  // the migration, in small batches, while the app works
                while try await db.step() != nil { await Task.yield() }
                return nil
            }
            for conversation in 1...Self.conversations {
                group.addTask { (conversation, try await Self.work(store, conversation: conversation)) }
            }
            var finals: [Int: [Message]] = [:]
            for try await case let (conversation, messages)? in group { finals[conversation] = messages }
            return finals
        }
        try await db.waitUntilMigrated()
        #expect(try db.isMigrated)

        // What each task last read is what the finished table holds.
        for (conversation, expected) in finals {
            #expect(try await store.conversation(conversation).map(Self.summary) == expected.map(Self.summary))
        }
        // The observation saw the writes of conversation 3, up to its last state.
        let last = finals[3]!.map(Self.summary)
        var seen = false
        while !seen, let batch = try await updates.next() { seen = batch.map(Self.summary) == last }
        #expect(seen)
    }

    /// One task's work on its conversation: inserts, reads, edits and deletes, checking each read
    /// against what it wrote. Returns the conversation as it left it.
    static func work<Store: MessageStoring>(_ store: Store, conversation: Int) async throws -> [Message] {
        var expected = try await store.conversation(conversation)
        #expect(expected.count == rows / conversations)
        for n in 1...10 {
            let sentAt = Date(timeIntervalSince1970: 1_700_000_000 + Double(n))
            let id = try await store.insert(Message(id: nil, conversationId: conversation, body: "new \(n)", sentAt: sentAt))
            #expect(id > Int64(rows))
            let inserted = try #require(try await store.message(id: id))
            #expect(inserted.body == "new \(n)" && inserted.sentAt == sentAt && inserted.conversationId == conversation)
            expected.append(inserted)

            // Edit a legacy message (moved or not yet) and the new one.
            var old = expected[n]
            old.body = "edited \(n)"
            #expect(try await store.update(old))
            expected[n] = old
            var new = inserted
            new.body = "new \(n), edited"
            #expect(try await store.update(new))
            expected[expected.count - 1] = new

            // Delete the first legacy message left, twice: the second finds nothing.
            let gone = expected.removeFirst()
            #expect(try await store.delete(id: gone.id!))
            #expect(try await !store.delete(id: gone.id!))
            #expect(try await store.message(id: gone.id!) == nil)
            #expect(try await !store.update(gone))

            #expect(try await store.conversation(conversation).map(summary) == expected.map(summary))
        }
        return expected
    }

    static func summary(_ message: Message) -> String {
        "\(message.id ?? -1) \(message.conversationId) \(message.body) \(message.sentAt.map { "\($0.timeIntervalSince1970)" } ?? "nil")"
    }
}
