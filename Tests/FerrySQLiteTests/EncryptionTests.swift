import Foundation
import Testing
@testable import FerrySQLite

@Suite(.enabled(if: SQLiteEngine.supportsEncryption))
struct EncryptionTests {
    @Test func createsEncryptedFileAndReopensWithKey() throws {
        let dir = TemporaryDirectory()
        let path = dir.path("enc.db")
        do {
            let db = try Connection(path: path, configuration: .init(cipher: .passphrase("s3cret")))
            try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (42)")
        }
        let header = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(16)
        #expect(header != Data("SQLite format 3\0".utf8))
        let db = try Connection(path: path, configuration: .init(cipher: .passphrase("s3cret")))
        #expect(try db.scalar("SELECT x FROM t", as: Int.self) == 42)
    }

    @Test func wrongKeyFailsAtOpen() throws {
        let dir = TemporaryDirectory()
        let path = dir.path("enc.db")
        try Connection(path: path, configuration: .init(cipher: .passphrase("right"))).execute("CREATE TABLE t(x)")
        #expect(throws: FerryError.wrongKeyOrNotADatabase(path: path)) {
            try Connection(path: path, configuration: .init(cipher: .passphrase("wrong")))
        }
        #expect(throws: FerryError.wrongKeyOrNotADatabase(path: path)) {
            try Connection(path: path)
        }
    }
}
