import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// The checkpointer completes its checkpoints on encrypted files, and keeps its one connection.
///
/// SQLCipher answers `PRAGMA page_size` with text; the checkpointer once read it as an integer,
/// failed, dropped its connection and opened a new one at every checkpoint, deriving the key each
/// time, and no checkpoint ever completed: every step then waited for a checkpoint.
@Suite(.enabled(if: SQLiteEngine.supportsEncryption), .timeLimit(.minutes(3)))
struct EncryptedCheckpointTests {
    static let key = Cipher.passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2))

    enum Placement: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case encryptedTarget, encryptedSource, bothEncrypted, sameFileEncrypted
        var testDescription: String { rawValue }
        var targetCipher: Cipher? { self == .encryptedSource ? nil : EncryptedCheckpointTests.key }
        var sourceCipher: Cipher? { self == .encryptedTarget || self == .sameFileEncrypted ? nil : EncryptedCheckpointTests.key }
    }

    @Test(arguments: Placement.allCases)
    func checkpointsCompleteOnEncryptedFilesWithOneConnection(placement: Placement) throws {
        let box = Sandbox(preferringMemory: true)
        let rows = 6_000
        let target = box.path("app.db")
        let plan: MigrationPlan
        if placement == .sameFileEncrypted {
            _ = try box.makeLegacy(rows: rows, name: "app.db", cipher: placement.targetCipher, table: "old_messages")
            plan = MigrationPlan(sources: [MigrationSource(.targetFile, tables: [
                TableMapping(target: "messages", source: "old_messages", filter: "conversation_id >= 0"),
            ])])
        } else {
            let legacy = try box.makeLegacy(rows: rows, cipher: placement.sourceCipher)
            // A filter matching every row: cleanup deletes in chunks, so the source's WAL grows too.
            plan = MigrationPlan(sources: [MigrationSource(.file(legacy), cipher: placement.sourceCipher, tables: [
                TableMapping(target: "messages", source: "messages", filter: "conversation_id >= 0"),
            ])])
        }
        let db = try FerryDatabase(path: target, configuration: .init(cipher: placement.targetCipher), plan: plan,
                                   options: .fixedBatches(of: 500))
        defer { db.close() }
        var catchUps = 0
        while try db.step() != nil {
            // Every WAL that holds anything is checkpointed, and the step waits for it.
            if db.checkpointer.largestWALBytes > 0 {
                #expect(db.checkpointer.relieveBacklog(over: 0, timeout: .seconds(30)) == .caughtUp)
                catchUps += 1
                #expect(db.checkpointer.largestWALBytes == 0, "the checkpoint copied every frame (no reader holds one)")
            }
        }
        #expect(catchUps > 5)
        let failures = db.checkpointer.failures
        #expect(failures.count == 0, "\(String(describing: failures.latest))")
        #expect(db.checkpointer.checkpointCount >= catchUps)
        #expect(db.checkpointer.connectionOpenCount == 1, "one connection for every checkpoint: each open derives the key again")
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == rows)
    }
}
