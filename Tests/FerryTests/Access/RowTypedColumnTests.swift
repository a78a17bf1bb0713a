import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// `let body: String = try row["body"]`: a row's columns read as Swift values, by name and by
/// index, from a migrating table (rows moved and rows still in the source) and from the finished
/// one, plain and encrypted; NULL into a type that is not optional, a value that does not convert
/// and a missing column throw `FerryError.decodingFailed` naming the column, and `row["x"]`
/// without a type is still the column's `Value?`.
@Suite(.timeLimit(.minutes(1))) struct RowTypedColumnTests {
    enum Kind: String, Codable { case text, photo }

    @Test(arguments: [false, SQLiteEngine.supportsEncryption])
    func columnsReadAsTypedValuesMigratingAndFinished(encrypted: Bool) throws {
        let box = Sandbox()
        let cipher: Cipher? = encrypted ? .passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
        let legacy = box.path("legacy.db")
        let source = try Connection(path: legacy, configuration: .init(cipher: cipher))
        try source.execute("""
            CREATE TABLE messages(id INTEGER PRIMARY KEY, body TEXT, n INTEGER, score REAL, flag INTEGER, sent_at,
                                  token BLOB, link TEXT, kind TEXT, small INTEGER)
            """)
        // Even ids hold values, odd ids NULLs; id 1 and 2 move at the first step, the rest stays pending.
        try source.execute("""
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 6)
            INSERT INTO messages SELECT x, 'm' || x,
                CASE WHEN x % 2 = 0 THEN x * 10 END, CASE WHEN x % 2 = 0 THEN x + 0.5 END, x % 2 = 0,
                CASE WHEN x % 2 = 0 THEN 1600000000 + x END, NULL,
                CASE WHEN x % 2 = 0 THEN 'https://example.com/' || x END,
                CASE WHEN x % 2 = 0 THEN 'photo' END, x FROM n
            """)
        source.close()
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), cipher: cipher, tables: [TableMapping(target: "messages", source: "messages")])])
        let db = try FerryDatabase(path: box.path("app.db"), configuration: .init(cipher: cipher), plan: plan, options: .fixedBatches(of: 2))
        defer { db.close() }
        try db.step()
        let token = UUID()
        let sentAt = Date(timeIntervalSince1970: 1_700_000_000.5)
        try db.write { db throws(FerryError) in
            try db.execute("INSERT INTO messages VALUES (7, 'm7', 70, 7.5, 1, ?, ?, ?, 'text', 7)",
                           [sentAt, token, URL(string: "https://example.com/7")!])
        }

        for round in ["migrating", "finished"] {
            let rows = try db.read { db throws(FerryError) in try db.fetchAll("SELECT * FROM messages ORDER BY id") }
            #expect(rows.count == 7, "\(round)")
            for row in rows {
                let id: Int64 = try row["id"]
                #expect(try row[0] as Int == Int(id), "\(round)")
                #expect(try row["body"] as String == "m\(id)", "\(round)")
                #expect(try row["SMALL"] as Int8 == Int8(id), "\(round)")  // names match ASCII case-insensitively
                let n: Int? = try row["n"], score: Double? = try row["score"], flag: Bool = try row["flag"]
                let date: Date? = try row["sent_at"], link: URL? = try row["link"], kind: Kind? = try row["kind"]
                if id % 2 == 0 {
                    #expect(n == Int(id) * 10 && score == Double(id) + 0.5 && flag, "\(round) \(id)")
                    #expect(date == Date(timeIntervalSince1970: 1_600_000_000 + Double(id)), "\(round) \(id)")
                    #expect(link == URL(string: "https://example.com/\(id)"), "\(round) \(id)")
                    #expect(kind == .photo, "\(round) \(id)")
                } else if id == 7 {
                    #expect(try row["sent_at"] as Date == sentAt && kind == .text, "\(round)")
                    #expect(try row["token"] as UUID == token && (try row[6] as Data).count == 16, "\(round)")
                    #expect(try row["link"] as URL == URL(string: "https://example.com/7")!, "\(round)")
                } else {
                    #expect(n == nil && score == nil && !flag && date == nil && link == nil && kind == nil, "\(round) \(id)")
                    #expect(try row["token"] as UUID? == nil, "\(round) \(id)")
                }
                // Without a type the subscripts are the stored values, as before.
                let stored: Value? = row["body"]
                #expect(stored == .text("m\(id)") && row["missing"] == nil && row[0] == .integer(id), "\(round)")
            }

            // NULL into a type that is not optional, a value that does not convert, a missing
            // column, an index out of range, a raw value the enum does not have: typed errors
            // naming the column.
            let null = try #require(rows.first)  // id 1: n is NULL
            try expectDecodingFailure(naming: "n") { () throws(FerryError) in _ = try null["n"] as Int }
            try expectDecodingFailure(naming: "token") { () throws(FerryError) in _ = try null[6] as UUID }
            try expectDecodingFailure(naming: "kind") { () throws(FerryError) in _ = try null["kind"] as Kind }
            try expectDecodingFailure(naming: "body") { () throws(FerryError) in _ = try null["body"] as Int }
            try expectDecodingFailure(naming: "body") { () throws(FerryError) in _ = try null["body"] as Date? }
            try expectDecodingFailure(naming: "nope") { () throws(FerryError) in _ = try null["nope"] as String? }
            try expectDecodingFailure(naming: "index 10") { () throws(FerryError) in _ = try null[10] as Int? }
            let wrongKind = try db.read { db throws(FerryError) in try db.fetchOne("SELECT 'video' AS kind") }!
            try expectDecodingFailure(naming: "kind") { () throws(FerryError) in _ = try wrongKind["kind"] as Kind }
            try expectDecodingFailure(naming: "small") { () throws(FerryError) in
                _ = try db.read { db throws(FerryError) in try db.fetchOne("SELECT 300 AS small") }!["small"] as Int8
            }

            try db.migrateAllBlocking()
        }
        #expect(try db.isMigrated)
    }

    /// Runs `body`, which must throw `FerryError.decodingFailed` with `text` in its message.
    private func expectDecodingFailure(naming text: String, sourceLocation: SourceLocation = #_sourceLocation,
                                       _ body: () throws(FerryError) -> Void) throws {
        do {
            try body()
            Issue.record("no error (expected one naming \(text))", sourceLocation: sourceLocation)
        } catch {
            guard case .decodingFailed(let message) = error else {
                Issue.record("\(error), not decodingFailed", sourceLocation: sourceLocation)
                return
            }
            #expect(message.contains(text), "\(message)", sourceLocation: sourceLocation)
        }
    }
}
