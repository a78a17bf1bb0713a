import FerryTestSupport
import Foundation
import Testing
@testable import Ferry
@testable import FerrySQLite

/// Keys never appear in traces, error messages, descriptions, progress, or anything persisted.
@Suite(.timeLimit(.minutes(3))) struct SecretsTests {
    static let sourceKey = "source-canary-9Zq"
    static let targetKey = "target-canary-7Qx"

    /// Key material Ferry holds is wiped (the deinit of `SecretBytes` calls `wipe()`).
    @Test func keyMaterialIsWiped() throws {
        let secret = SecretBytes(Array(Self.sourceKey.utf8))
        #expect(secret.withBytes { Array($0) } == Array(Self.sourceKey.utf8))
        secret.wipe()
        #expect(secret.withBytes { $0.allSatisfy { $0 == 0 } })
        #expect(secret.count == Self.sourceKey.utf8.count)
    }

    /// Statement traces expand bound values, except the key of an ATTACH.
    @Test func tracesNeverShowAnAttachKey() throws {
        let db = try Connection.inMemory()
        let attach = try db.prepare("ATTACH DATABASE ? AS other KEY ?")
        try attach.bind([.text("/tmp/x.db"), .text(Self.sourceKey)])
        #expect(!SQLiteLog.traceText(of: attach.handle).contains(Self.sourceKey))
        #expect(SQLiteLog.traceText(of: attach.handle).contains("KEY ?"))
        let attachBlob = try db.prepare("  attach database ? as other key ?")
        try attachBlob.bind([.text("/tmp/x.db"), .blob(Array(Self.sourceKey.utf8))])
        let hex = Array(Self.sourceKey.utf8).map { String(format: "%02x", $0) }.joined()
        #expect(!SQLiteLog.traceText(of: attachBlob.handle).lowercased().contains(hex))
        // Other statements are traced with their values (the check above can fail).
        let select = try db.prepare("SELECT ?")
        try select.bind([.text("visible value")])
        #expect(SQLiteLog.traceText(of: select.handle).contains("visible value"))
    }

    /// A whole migration from an encrypted source into a plain target: no key in descriptions,
    /// progress, events, errors, or in any byte of the target's files (catalog included).
    @Test(.enabled(if: SQLiteEngine.supportsEncryption)) func keysAreNeverShownNorPersisted() throws {
        let box = Sandbox()
        let cipher = Cipher.passphrase(Self.sourceKey, settings: .sqlcipher3)
        let legacy = try box.makeLegacy(rows: 300, cipher: cipher)
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), cipher: cipher, tables: [
            TableMapping(target: "messages", source: "messages", filter: "conversation_id <> 2"),
        ])])
        var texts = ["\(cipher)", String(reflecting: cipher), "\(plan)", String(reflecting: plan), "\(cipher.key)"]
        let app = box.path("app.db")
        let recorder = EventRecorder()
        do {
            let db = try FerryDatabase(path: app, plan: plan)
            db.onEvent { recorder.append($0) }
            try db.write { try $0.execute("UPDATE messages SET body = 'edited' WHERE id = 5") }
            try db.step()
            texts.append("\(try db.progress())")
            texts.append("\(try db.verify())")
            try db.migrateAllBlocking()
            db.close()
        }
        // Wrong key, missing key: the errors name the file, never a key.
        let wrong = MigrationPlan(sources: [MigrationSource(.file(legacy), cipher: .passphrase("wrong-" + Self.sourceKey, settings: .sqlcipher3), tables: [
            TableMapping(target: "other", source: "messages"),
        ])])
        do { _ = try FerryDatabase(path: box.path("app2.db"), plan: wrong); Issue.record("wrong key accepted") } catch {
            texts.append("\(error)")
            texts.append(String(reflecting: error))
        }
        let keyless = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [TableMapping(target: "other", source: "messages")])])
        do { _ = try FerryDatabase(path: box.path("app3.db"), plan: keyless); Issue.record("missing key accepted") } catch {
            texts.append("\(error)")
        }
        texts += recorder.events.map { "\($0)" }
        for text in texts {
            #expect(!text.contains(Self.sourceKey), "key shown in: \(text)")
        }
        // Nothing persisted: every byte of every file of the plain target.
        for name in try FileManager.default.contentsOfDirectory(atPath: box.url.path) where name.hasPrefix("app") {
            let bytes = try Data(contentsOf: box.url.appendingPathComponent(name))
            #expect(bytes.range(of: Data(Self.sourceKey.utf8)) == nil, "key found in \(name)")
        }
    }

    /// An encrypted target: its own key is not stored in the catalog either (the catalog holds
    /// cipher settings only), checked through a decrypting connection.
    @Test(.enabled(if: SQLiteEngine.supportsEncryption)) func catalogOfAnEncryptedTargetHoldsNoKey() throws {
        let box = Sandbox()
        let sourceCipher = Cipher.passphrase(Self.sourceKey)
        let legacy = try box.makeLegacy(rows: 50, cipher: sourceCipher)
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), cipher: sourceCipher, tables: [TableMapping(target: "messages", source: "messages")])])
        let targetCipher = Cipher.passphrase(Self.targetKey)
        let db = try FerryDatabase(path: box.path("app.db"), configuration: .init(cipher: targetCipher), plan: plan)
        try db.step()
        let dump = try db.pool.read { c in
            try c.fetchAll("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'ferry_%'").flatMap { row in
                let table: String = try row.get(0)
                return try c.fetchAll("SELECT * FROM main.\(q(table))").map { "\($0.values)" }
            }
        }.joined(separator: "\n")
        #expect(!dump.isEmpty)
        #expect(!dump.contains(Self.sourceKey) && !dump.contains(Self.targetKey), "\(dump)")
    }
}
