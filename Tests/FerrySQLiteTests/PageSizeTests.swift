import FerryTestSupport
import Testing
@testable import FerrySQLite

/// `Connection.pageSize(schema:)` reads SQLite's integer answer and SQLCipher's text answer alike.
@Suite struct PageSizeTests {
    @Test func plainDatabasesAnswerAnInteger() throws {
        let box = Sandbox()
        let db = try Connection(path: box.path("plain.db"))
        try db.execute("CREATE TABLE t(x)")
        #expect(try db.pageSize() == 4096)
        try db.execute("ATTACH DATABASE ? AS other", [.text(box.path("other.db"))])
        try db.execute("PRAGMA other.page_size = 8192; CREATE TABLE other.t(x)")
        #expect(try db.pageSize(schema: "other") == 8192)
    }

    @Test(.enabled(if: SQLiteEngine.supportsEncryption), arguments: [(4, nil, 4096), (3, nil, 1024), (4, 8192, 8192)] as [(Int, Int?, Int)])
    func encryptedDatabasesAnswerText(compatibility: Int, cipherPageSize: Int?, expected: Int) throws {
        let box = Sandbox()
        let cipher = Cipher.passphrase("k", settings: CipherSettings(compatibility: compatibility, pageSize: cipherPageSize, kdfIterations: 2))
        let db = try Connection(path: box.path("enc.db"), configuration: .init(cipher: cipher))
        try db.execute("CREATE TABLE t(x)")
        // SQLCipher answers the pragma itself, as text: what the checkpointer once failed to read.
        let raw = try #require(try db.fetchOne("PRAGMA main.page_size"))
        #expect(raw[0] == .text(String(expected)))
        #expect(try db.pageSize() == expected)
        // As an attached database, from a plain connection.
        let plain = try Connection(path: box.path("plain.db"))
        try plain.attach(path: box.path("enc.db"), as: "src", cipher: cipher)
        #expect(try plain.pageSize(schema: "src") == expected)
        #expect(try plain.pageSize() == 4096)
    }

    @Test func valuesThatAreNoPageSizeAreRefused() {
        #expect(Connection.pageSize(from: .integer(4096)) == 4096)
        #expect(Connection.pageSize(from: .text(" 1024\n")) == 1024)
        #expect(Connection.pageSize(from: .text("cipher")) == nil)
        #expect(Connection.pageSize(from: .integer(1000)) == nil)
        #expect(Connection.pageSize(from: .integer(256)) == nil)
        #expect(Connection.pageSize(from: .null) == nil)
        #expect(Connection.pageSize(from: .real(4096)) == nil)
    }
}
