import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

extension Faults {
    /// I/O errors while an encrypted file is keyed.
    @Suite(.enabled(if: SQLiteEngine.supportsEncryption, "encryption needs SQLCipher"), .timeLimit(.minutes(1)))
    struct EncryptionFaultTests {
        /// Bug: SQLCipher reads a file's salt once, when the key is set, and takes a random salt when
        /// that read fails. A single failed read there made the right key look wrong: opening or
        /// attaching failed with `wrongKeyOrNotADatabase` (an app may answer that by asking for
        /// another password, or by resetting its database). Ferry now keys again before saying so.
        /// Each of the first reads fails in turn here: none may report a wrong key.
        @Test func aFailedReadNeverLooksLikeAWrongKey() throws {
            let box = Sandbox()
            let cipher = ScenarioTemplate.cipher("right")
            let path = try box.makeLegacy(rows: 200, cipher: cipher)
            let app = box.path("app.db")
            var failures = 0
            for index in 0..<8 as Range<Int64> {
                for attaching in [false, true] {
                    let rule = FaultVFS.arm(path: path, operations: [.read], trigger: .nth(index), failure: .ioError)
                    defer { rule.disarm() }
                    do {
                        if attaching {
                            let db = try Connection(path: app, configuration: FaultVFS.configuration())
                            try db.attach(path: path, as: "source", cipher: cipher)
                            #expect(try db.scalar("SELECT count(*) FROM source.messages", as: Int.self) == 200)
                        } else {
                            let db = try Connection(path: path, configuration: FaultVFS.configuration(.init(cipher: cipher)))
                            #expect(try db.scalar("SELECT count(*) FROM messages", as: Int.self) == 200)
                        }
                    } catch {
                        failures += 1
                        #expect(error.resultCode.primary == .ioError || error.resultCode.primary == .cantOpen,
                                "read #\(index) failing (\(attaching ? "attach" : "open")): \(error)")
                    }
                }
            }
            #expect(failures > 0)
            // A wrong key is still reported as such.
            let wrong = ScenarioTemplate.cipher("wrong")
            #expect(throws: SQLiteError.wrongKeyOrNotADatabase(path: path)) {
                try Connection(path: path, configuration: FaultVFS.configuration(.init(cipher: wrong)))
            }
            let db = try Connection(path: app)
            #expect(throws: SQLiteError.wrongKeyOrNotADatabase(path: path)) { try db.attach(path: path, as: "source", cipher: wrong) }
        }
    }
}
