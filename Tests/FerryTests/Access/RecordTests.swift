import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// Records read and written through `FerryConnection` on a migrating table (plain and encrypted,
/// before and after steps) and once it finished: snake-case columns, dates, UUIDs, optionals and
/// raw-value enums round-trip; a value that does not fit fails with a typed error naming its column.
@Suite(.timeLimit(.minutes(2))) struct RecordTests {
    enum Kind: String, Codable { case text, photo }

    struct Message: Codable, Equatable {
        var id: Int64
        var conversationId: Int
        var body: String
        var sentAt: Date?
        var kind: Kind
        var token: UUID?
    }

    static let source = "id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, body TEXT, sent_at TEXT, kind TEXT NOT NULL DEFAULT 'text', token BLOB"

    @Test(arguments: [false, SQLiteEngine.supportsEncryption])
    func recordsReadAndWriteAsOnTheFinishedTable(encrypted: Bool) throws {
        let box = Sandbox()
        let cipher: Cipher? = encrypted ? .passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
        let legacy = box.path("legacy.db")
        let source = try Connection(path: legacy, configuration: .init(cipher: cipher))
        try source.execute("CREATE TABLE messages(\(Self.source))")
        try source.execute("""
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 10)
            INSERT INTO messages(id, conversation_id, body, sent_at, kind) SELECT x, x % 2, 'm' || x, '2026-11-0' || (x % 9 + 1) || ' 10:00:00', 'text' FROM n
            """)
        source.close()
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), cipher: cipher, tables: [TableMapping(target: "messages", source: "messages")])])
        let db = try FerryDatabase(path: box.path("app.db"), configuration: .init(cipher: cipher), plan: plan, options: .fixedBatches(of: 3))
        defer { db.close() }
        try db.step()  // ids 1-3 moved, 4-10 pending

        let sentAt = Date(timeIntervalSince1970: 1_800_000_000.25)
        let token = UUID()
        let new = Message(id: 11, conversationId: 1, body: "hello", sentAt: sentAt, kind: .photo, token: token)
        try db.write { db in
            try db.insert(new, into: "messages", keys: .snakeCase)
            // A pending row and a moved one, updated from records.
            var pending = try #require(try db.fetchOne(Message.self, "SELECT * FROM messages WHERE id = 7", keys: .snakeCase))
            pending.body = "edited"
            #expect(try db.update(pending, in: "messages", key: ["id"], keys: .snakeCase))
            var moved = try #require(try db.fetchOne(Message.self, "SELECT * FROM messages WHERE id = 2", keys: .snakeCase))
            moved.kind = .photo
            #expect(try db.update(moved, in: "messages", key: ["id"], keys: .snakeCase))
            // Upsert: a pending row's key (the finished table holds it: an update) and a new one.
            try db.upsert(Message(id: 9, conversationId: 0, body: "upserted", sentAt: nil, kind: .text, token: nil), into: "messages", key: ["id"], keys: .snakeCase)
            try db.upsert(Message(id: 12, conversationId: 0, body: "new", sentAt: nil, kind: .text, token: nil), into: "messages", key: ["id"], keys: .snakeCase)
            #expect(try !db.update(Message(id: 99, conversationId: 0, body: "", sentAt: nil, kind: .text, token: nil), in: "messages", key: ["id"], keys: .snakeCase))
        }
        try db.step()
        for round in 0..<2 {
            let all = try db.read { db throws(FerryError) in try db.fetchAll(Message.self, "SELECT * FROM messages ORDER BY id", keys: .snakeCase) }
            #expect(all.count == 12, "round \(round)")
            #expect(all.first(where: { $0.id == 11 }) == new, "round \(round)")
            #expect(all.first(where: { $0.id == 7 })?.body == "edited")
            #expect(all.first(where: { $0.id == 2 })?.kind == .photo)
            #expect(all.first(where: { $0.id == 9 })?.body == "upserted" && all.first(where: { $0.id == 9 })?.sentAt == nil)
            #expect(all.first(where: { $0.id == 12 })?.body == "new")
            // A date the source stored as text reads as that UTC time.
            #expect(all.first(where: { $0.id == 1 })?.sentAt == ISO8601DateFormatter().date(from: "2026-11-02T10:00:00Z"))
            try db.migrateAllBlocking()
        }

        // Typed errors: a column that is missing, a value that does not fit, keys that name nothing.
        struct Wrong: Decodable { var id: Int64; var missing: String }
        #expect { try db.read { db throws(FerryError) in try db.fetchAll(Wrong.self, "SELECT id FROM messages") } } throws: { error in
            guard case FerryError.decodingFailed(let message)? = error as? FerryError else { return false }
            return message.contains("missing")
        }
        struct BadKind: Decodable { var kind: Int }
        #expect(throws: FerryError.self) { try db.read { db throws(FerryError) in try db.fetchAll(BadKind.self, "SELECT kind FROM messages") } }
        #expect(throws: FerryError.self) { try db.write { db throws(FerryError) in try db.update(new, in: "messages", key: ["nope"], keys: .snakeCase) } }
        struct Nested: Encodable { var id = 1; var inner = [1, 2] }
        #expect(throws: FerryError.self) { try db.write { db throws(FerryError) in try db.insert(Nested(), into: "messages") } }
    }

    @Test func snakeCaseNamesColumnsLikeJSONDecoder() {
        let keys = ColumnKeys.snakeCase
        #expect(keys.column(for: "conversationId") == "conversation_id")
        #expect(keys.column(for: "bodyHTML") == "body_html")
        #expect(keys.column(for: "htmlBody") == "html_body")
        #expect(keys.column(for: "sentAt2") == "sent_at2")
        #expect(keys.column(for: "id") == "id")
        #expect(keys.column(for: "URLString") == "url_string")
        #expect(ColumnKeys.asWritten.column(for: "conversationId") == "conversationId")
    }
}
