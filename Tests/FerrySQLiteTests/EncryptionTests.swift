import FerryTestSupport
import Foundation
import Dispatch
import Testing
@testable import FerrySQLite

@Suite(.enabled(if: SQLiteEngine.supportsEncryption), .timeLimit(.minutes(3)))
struct EncryptionTests {
    @Test func createsEncryptedFileAndReopensWithKey() throws {
        let dir = Sandbox()
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
        let dir = Sandbox()
        let path = dir.path("enc.db")
        try Connection(path: path, configuration: .init(cipher: .passphrase("right"))).execute("CREATE TABLE t(x)")
        #expect(throws: SQLiteError.wrongKeyOrNotADatabase(path: path)) {
            try Connection(path: path, configuration: .init(cipher: .passphrase("wrong")))
        }
        #expect(throws: SQLiteError.wrongKeyOrNotADatabase(path: path)) {
            try Connection(path: path)
        }
    }
}

/// Cipher settings with a cheap key derivation, so that tests which open many encrypted
/// connections stay fast (SQLCipher 4's default is 256000 PBKDF2 iterations per open).
let fastSettings = CipherSettings(kdfIterations: 1000)

/// A passphrase cipher with `fastSettings`.
func fastCipher(_ passphrase: String) -> Cipher { .passphrase(passphrase, settings: fastSettings) }

/// Debian's SQLCipher 3.4.1 command-line shell, when installed.
let sqlcipher3CLI = findExecutable(["/usr/bin/sqlcipher"])

/// The SQLCipher 4.6.1 command-line shell installed by `scripts/setup`, when present.
let sqlcipher4CLI = findExecutable(["/usr/local/bin/sqlcipher-4.6.1"])

/// The first 16 bytes of a file: `"SQLite format 3\0"` for a plain database.
func fileHeader(_ path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path)).prefix(16)
}

/// The header of every plain SQLite database file.
let plainHeader = Data("SQLite format 3\0".utf8)

/// Runs `body` with the process's standard error (file descriptor 2) redirected to a temporary
/// file, and returns what was written there. The captured text is copied back to the real standard
/// error afterwards, so output of tests running in parallel is not lost.
func capturingStandardError(_ body: () throws -> Void) throws -> String {
    let dir = Sandbox()
    let path = dir.path("stderr.txt")
    fflush(nil)
    let saved = dup(2)
    let capture = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
    guard saved >= 0, capture >= 0 else { throw POSIXError(.EBADF) }
    dup2(capture, 2)
    close(capture)
    defer {
        fflush(nil)
        dup2(saved, 2)
        close(saved)
    }
    try body()
    fflush(nil)
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    if !text.isEmpty { FileHandle.standardError.write(Data(text.utf8)) }
    return text
}

extension EncryptionTests {
    @Test func engineIsSQLCipher4() {
        #expect(SQLiteEngine.kind == .sqlcipher)
        #expect(SQLiteEngine.cipherVersion?.hasPrefix("4.6.1") == true)
        #expect(SQLiteEngine.versionDescription.hasPrefix("SQLCipher 4.6.1"))
    }

    @Test func rawKeysWithAndWithoutSalt() throws {
        let dir = Sandbox()
        let path = dir.path("raw.db")
        let key = [UInt8](repeating: 0xA5, count: 32)
        try Connection(path: path, configuration: .init(cipher: try .checkedRawKey(key))).execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        #expect(try fileHeader(path) != plainHeader)
        // The file's salt is its first 16 bytes; a raw key with that salt opens it too.
        let salt = [UInt8](try fileHeader(path))
        let hex = key.hexString + salt.hexString
        for cipher in [try Cipher.checkedRawKey(key), try Cipher.checkedRawKey(key, salt: salt), Cipher(key: try .checkedRaw(hex: hex)),
                       Cipher(key: try .checkedRaw(hex: key.hexString.uppercased()))] {
            let db = try Connection(path: path, configuration: .init(cipher: cipher))
            #expect(try db.scalar("SELECT x FROM t", as: Int.self) == 1)
        }
        #expect(throws: SQLiteError.wrongKeyOrNotADatabase(path: path)) {
            try Connection(path: path, configuration: .init(cipher: try .checkedRawKey([UInt8](repeating: 0xA6, count: 32))))
        }
        #expect(throws: SQLiteError.invalidArguments("a raw key must be 32 bytes, got 31")) { try Cipher.checkedRawKey(Array(key.dropLast())) }
        #expect(throws: SQLiteError.invalidArguments("a salt must be 16 bytes, got 2")) { try Cipher.checkedRawKey(key, salt: [1, 2]) }
        #expect(throws: SQLiteError.invalidArguments("a raw key must be 64 hexadecimal digits (96 with a salt)")) {
            try CipherKey.checkedRaw(hex: String(repeating: "g", count: 64))
        }
    }

    @Test func keysNeverAppearInDescriptions() throws {
        let cipher = Cipher.passphrase("hunter2", settings: .sqlcipher3)
        #expect(cipher.description == "Cipher(key: passphrase(<redacted>), settings: cipher_compatibility=3)")
        #expect(!String(describing: cipher).contains("hunter2"))
        #expect(!String(reflecting: cipher).contains("hunter2"))
        #expect(try Cipher.checkedRawKey([UInt8](repeating: 1, count: 32)).key.description == "raw(<redacted>)")
        #expect(Cipher.passphrase("a") == Cipher.passphrase("a"))
        #expect(Cipher.passphrase("a") != Cipher.passphrase("b"))
    }

    @Test func invalidSettingsAreRefusedBeforeOpening() throws {
        let dir = Sandbox()
        let path = dir.path("bad.db")
        #expect(throws: SQLiteError.invalidArguments("cipher page size must be a power of two from 512 to 65536, got 1000")) {
            try Connection(path: path, configuration: .init(cipher: .passphrase("k", settings: .init(pageSize: 1000))))
        }
        #expect(throws: SQLiteError.invalidArguments("cipher compatibility must be 1, 2, 3 or 4, got 5")) {
            try Connection(path: path, configuration: .init(cipher: .passphrase("k", settings: .init(compatibility: 5))))
        }
        #expect(throws: SQLiteError.invalidArguments("cipher KDF iterations must be positive, got 0")) {
            try CipherSettings(kdfIterations: 0).check()
        }
        #expect(throws: SQLiteError.invalidArguments("cipher plaintext header size must be a multiple of 16 from 0 to 100, got 8")) {
            try CipherSettings(plaintextHeaderSize: 8).check()
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func customSettingsAreUsedAndReported() throws {
        let dir = Sandbox()
        let path = dir.path("custom.db")
        let settings = CipherSettings(pageSize: 8192, kdfIterations: 2000, hmacAlgorithm: .sha256, kdfAlgorithm: .sha256)
        let db = try Connection(path: path, configuration: .init(cipher: .passphrase("k", settings: settings)))
        try db.execute("CREATE TABLE t(x)")
        let report = try db.cipherSettingsReport()
        #expect(report["cipher_page_size"] == "8192")
        #expect(report["kdf_iter"] == "2000")
        #expect(report["cipher_hmac_algorithm"] == "HMAC_SHA256")
        #expect(report["cipher_kdf_algorithm"] == "PBKDF2_HMAC_SHA256")
        db.close()
        // The same key with other settings cannot read the file.
        #expect(throws: SQLiteError.wrongKeyOrNotADatabase(path: path)) {
            try Connection(path: path, configuration: .init(cipher: fastCipher("k")))
        }
        #expect(try Connection(path: path, configuration: .init(cipher: .passphrase("k", settings: settings))).scalar("SELECT count(*) FROM t", as: Int.self) == 0)
    }

    @Test func rekeyChangesTheKeyInPlace() throws {
        let dir = Sandbox()
        let path = dir.path("rekey.db")
        do {
            let db = try Connection(path: path, configuration: .init(cipher: fastCipher("old")))
            try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES ('kept')")
            try db.rekey(to: .passphrase("new"))
            // The connection keeps working after the rekey.
            #expect(try db.scalar("SELECT x FROM t", as: String.self) == "kept")
        }
        #expect(throws: SQLiteError.wrongKeyOrNotADatabase(path: path)) {
            try Connection(path: path, configuration: .init(cipher: fastCipher("old")))
        }
        let db = try Connection(path: path, configuration: .init(cipher: fastCipher("new")))
        #expect(try db.scalar("SELECT x FROM t", as: String.self) == "kept")
        // Rekeying to a raw key works too.
        let raw = try CipherKey.checkedRaw([UInt8](repeating: 7, count: 32))
        try db.rekey(to: raw)
        db.close()
        #expect(try Connection(path: path, configuration: .init(cipher: Cipher(key: raw, settings: fastSettings)))
            .scalar("SELECT x FROM t", as: String.self) == "kept")
    }

    @Test func rekeyOfAPlainDatabaseIsUnsupported() throws {
        let dir = Sandbox()
        let db = try Connection(path: dir.path("plain.db"))
        let error = #expect(throws: SQLiteError.self) { try db.rekey(to: .passphrase("k")) }
        guard case .unsupported? = error else {
            Issue.record("expected unsupported, got \(String(describing: error))")
            return
        }
        db.close()
        #expect(throws: SQLiteError.connectionClosed) { try db.rekey(to: .passphrase("k")) }
    }

    @Test func exportEncryptedToPlain() throws {
        let dir = Sandbox()
        let source = try Connection(path: dir.path("enc.db"), configuration: .init(cipher: fastCipher("k")))
        try source.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2); CREATE INDEX t_x ON t(x)")
        let plain = dir.path("plain.db")
        try source.export(to: plain, cipher: nil)
        #expect(try fileHeader(plain) == plainHeader)
        let db = try Connection(path: plain)
        #expect(try db.fetchAll("SELECT x FROM t ORDER BY x").map { try $0.column(0, as: Int.self) } == [1, 2])
        #expect(try db.scalar("SELECT count(*) FROM sqlite_master WHERE name = 't_x'", as: Int.self) == 1)
        // The export schema is detached afterwards.
        #expect(try source.fetchAll("PRAGMA database_list").count == 1)
    }

    @Test func exportPlainToEncrypted() throws {
        let dir = Sandbox()
        let source = try Connection(path: dir.path("plain.db"))
        try source.execute("CREATE TABLE t(x); INSERT INTO t VALUES ('secret text')")
        let encrypted = dir.path("enc.db")
        try source.export(to: encrypted, cipher: fastCipher("k"))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: encrypted))
        #expect(bytes.prefix(16) != plainHeader)
        #expect(bytes.range(of: Data("secret text".utf8)) == nil)
        #expect(throws: SQLiteError.wrongKeyOrNotADatabase(path: encrypted)) { try Connection(path: encrypted) }
        let db = try Connection(path: encrypted, configuration: .init(cipher: fastCipher("k")))
        #expect(try db.scalar("SELECT x FROM t", as: String.self) == "secret text")
    }

    @Test func exportChangesCipherSettings() throws {
        let dir = Sandbox()
        let source = try Connection(path: dir.path("v4.db"), configuration: .init(cipher: fastCipher("k")))
        try source.execute("CREATE TABLE t(x); INSERT INTO t VALUES (3)")
        let v3 = dir.path("v3.db")
        let v3Cipher = Cipher.passphrase("k3", settings: CipherSettings(compatibility: 3, kdfIterations: 1000))
        try source.export(to: v3, cipher: v3Cipher)
        let db = try Connection(path: v3, configuration: .init(cipher: v3Cipher))
        #expect(try db.scalar("SELECT x FROM t", as: Int.self) == 3)
        #expect(try db.cipherSettingsReport()["cipher_page_size"] == "1024")
        // The process-wide defaults the export changed for a moment are SQLCipher 4's again.
        let defaults = try CipherDefaults.withStableDefaults { () throws(SQLiteError) -> [String?] in
            try ["cipher_default_kdf_iter", "cipher_default_page_size", "cipher_default_hmac_algorithm"].map { name throws(SQLiteError) in
                try source.fetchOne("PRAGMA \(name)").map { "\($0[0])".trimmingQuotes }
            }
        }
        #expect(defaults == ["256000", "4096", "HMAC_SHA512"])
    }

    @Test func exportRefusesAnExistingFile() throws {
        let dir = Sandbox()
        let db = try Connection(path: dir.path("a.db"), configuration: .init(cipher: fastCipher("k")))
        let target = dir.path("b.db")
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: target))
        #expect(throws: SQLiteError.invalidArguments("export needs a new file, but \(target) exists")) {
            try db.export(to: target, cipher: nil)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == Data("keep me".utf8))
    }

    @Test func attachWithADifferentKey() throws {
        let dir = Sandbox()
        let otherPath = dir.path("other.db")
        try Connection(path: otherPath, configuration: .init(cipher: fastCipher("other")))
            .execute("CREATE TABLE o(y); INSERT INTO o VALUES (10), (20)")
        let plainPath = dir.path("plain.db")
        try Connection(path: plainPath).execute("CREATE TABLE p(z); INSERT INTO p VALUES (100)")

        let db = try Connection(path: dir.path("main.db"), configuration: .init(cipher: fastCipher("main")))
        try db.execute("CREATE TABLE m(x); INSERT INTO m VALUES (1)")
        try db.attach(path: otherPath, as: "other", cipher: fastCipher("other"))
        try db.attach(path: plainPath, as: "plain")  // a plain file never inherits the main key
        #expect(try db.scalar("SELECT sum(x) + (SELECT sum(y) FROM other.o) + (SELECT sum(z) FROM plain.p) FROM m", as: Int.self) == 131)
        try db.execute("INSERT INTO other.o SELECT x FROM m")
        try db.detach("other")
        try db.detach("plain")
        #expect(try fileHeader(plainPath) == plainHeader)
        #expect(try Connection(path: otherPath, configuration: .init(cipher: fastCipher("other")))
            .scalar("SELECT count(*) FROM o", as: Int.self) == 3)

        // Wrong key, missing key, missing file: typed errors, and nothing stays attached.
        #expect(throws: SQLiteError.wrongKeyOrNotADatabase(path: otherPath)) {
            try db.attach(path: otherPath, as: "other", cipher: fastCipher("main"))
        }
        #expect(throws: SQLiteError.wrongKeyOrNotADatabase(path: otherPath)) {
            try db.attach(path: otherPath, as: "other")
        }
        let missing = dir.path("missing.db")
        #expect(throws: SQLiteError.fileNotFound(path: missing)) { try db.attach(path: missing, as: "missing") }
        #expect(try db.fetchAll("PRAGMA database_list").count == 1)
    }

    @Test func wrongKeyWritesNothingToStandardError() throws {
        let dir = Sandbox()
        let path = dir.path("enc.db")
        try Connection(path: path, configuration: .init(cipher: fastCipher("right"))).execute("CREATE TABLE t(x)")
        let output = try capturingStandardError {
            #expect(throws: SQLiteError.wrongKeyOrNotADatabase(path: path)) {
                try Connection(path: path, configuration: .init(cipher: fastCipher("wrong")))
            }
            #expect(throws: SQLiteError.wrongKeyOrNotADatabase(path: path)) {
                try Connection(path: dir.path("main.db")).attach(path: path, as: "x", cipher: fastCipher("wrong"))
            }
        }
        // Only SQLCipher's messages matter here: tests running in parallel may write their own.
        #expect(!output.localizedCaseInsensitiveContains("sqlcipher"))
        #expect(!output.contains("hmac check failed"))
        #expect(!output.contains("ERROR CORE"))
    }

    @Test func settingsOfAnAttachDoNotLeakIntoConnectionsOpeningMeanwhile() throws {
        // An attach with non-default settings changes SQLCipher's process-wide defaults for a moment.
        // A connection keyed meanwhile must still use its own (here: default) settings.
        let dir = Sandbox()
        let path = dir.path("defaults.db")
        try Connection(path: path, configuration: .init(cipher: .passphrase("k"))).execute("CREATE TABLE t(x)")
        let helper = try Connection.inMemory()
        let holding = DispatchSemaphore(value: 0), opened = Shared<Result<Int?, SQLiteError>?>(nil)
        let opener = Thread {
            holding.wait()
            opened.update { $0 = Result { () throws(SQLiteError) -> Int? in
                try Connection(path: path, configuration: .init(cipher: .passphrase("k"))).scalar("SELECT count(*) FROM t", as: Int.self)
            } }
        }
        try CipherDefaults.withSettings(CipherSettings(pageSize: 1024, kdfIterations: 1000), on: helper) { () throws(SQLiteError) in
            opener.start()
            holding.signal()
            Thread.sleep(forTimeInterval: 0.3)  // the opener keys its connection now, unless it waits for the defaults
        }
        while opened.value == nil { Thread.sleep(forTimeInterval: 0.01) }
        #expect(try opened.value?.get() == 0)
    }
}

// MARK: Command-line interoperability

extension EncryptionTests {
    @Test(.enabled(if: sqlcipher3CLI != nil))
    func opensADatabaseCreatedBySQLCipher3() throws {
        let cli = try #require(sqlcipher3CLI)
        let dir = Sandbox()
        let path = dir.path("v3.db")
        let created = try runProcess(cli, [path], input: """
            PRAGMA key='legacy pass';
            CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT);
            INSERT INTO notes(body) VALUES ('from SQLCipher 3'), ('ünïcode');
            """)
        #expect(created.status == 0, "\(created.stderr)")
        let version = try runProcess(cli, [":memory:"], input: "PRAGMA key='x';\nPRAGMA cipher_version;\n")
        #expect(version.stdout.hasPrefix("3."))

        // SQLCipher 4 defaults cannot read it; the SQLCipher 3 settings can.
        #expect(throws: SQLiteError.wrongKeyOrNotADatabase(path: path)) {
            try Connection(path: path, configuration: .init(cipher: .passphrase("legacy pass")))
        }
        let legacy = Cipher.passphrase("legacy pass", settings: .sqlcipher3)
        do {
            let db = try Connection(path: path, configuration: .init(cipher: legacy, journalMode: .keep))
            #expect(try db.fetchAll("SELECT body FROM notes ORDER BY id").map { try $0.column(0, as: String.self) }
                == ["from SQLCipher 3", "ünïcode"])
            #expect(try db.cipherSettingsReport()["kdf_iter"] == "64000")
            try db.execute("INSERT INTO notes(body) VALUES (?)", ["from Ferry"])
        }
        // Written back in SQLCipher 3 format: the old shell reads our row.
        let read = try runProcess(cli, [path], input: "PRAGMA key='legacy pass';\nSELECT body FROM notes ORDER BY id;\n")
        #expect(read.stdout == "from SQLCipher 3\nünïcode\nfrom Ferry\n", "\(read.stderr)")

        // Attaching it to an SQLCipher 4 database works with the same settings.
        let db = try Connection(path: dir.path("main.db"), configuration: .init(cipher: fastCipher("main")))
        try db.attach(path: path, as: "legacy", cipher: legacy)
        #expect(try db.scalar("SELECT count(*) FROM legacy.notes", as: Int.self) == 3)
    }

    @Test(.enabled(if: sqlcipher4CLI != nil))
    func databaseCreatedByFerryOpensInTheSQLCipher4Shell() throws {
        let cli = try #require(sqlcipher4CLI)
        let dir = Sandbox()
        let path = dir.path("ferry.db")
        do {
            let db = try Connection(path: path, configuration: .init(cipher: .passphrase("shared secret")))
            try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)")
            try db.execute("INSERT INTO t(name) VALUES (?), (?)", ["alpha", "beta"])
        }
        let read = try runProcess(cli, [path], input: "PRAGMA key='shared secret';\nSELECT id, name FROM t ORDER BY id;\n")
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout == "ok\n1|alpha\n2|beta\n", "\(read.stderr)")
        let wrong = try runProcess(cli, [path], input: "PRAGMA key='other';\nSELECT id FROM t;\n")
        #expect(wrong.stderr.contains("file is not a database"))
    }
}

// MARK: Builds without SQLCipher

@Suite(.enabled(if: !SQLiteEngine.supportsEncryption), .timeLimit(.minutes(3)))
struct NoEncryptionTests {
    /// The error every encryption API throws in a build without SQLCipher.
    static let unsupported = SQLiteError.unsupported("encryption needs the SQLCipher trait; this build links the system SQLite")

    @Test func engineIsTheSystemSQLite() {
        #expect(SQLiteEngine.kind == .systemSQLite)
        #expect(SQLiteEngine.cipherVersion == nil)
        #expect(SQLiteEngine.versionDescription == "SQLite \(SQLiteEngine.sqliteVersion)")
    }

    @Test func encryptionThrowsUnsupported() throws {
        let dir = Sandbox()
        let path = dir.path("x.db")
        #expect(throws: Self.unsupported) {
            try Connection(path: path, configuration: .init(cipher: .passphrase("k")))
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        let db = try Connection(path: path)
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        #expect(throws: Self.unsupported) { try db.rekey(to: .passphrase("k")) }
        #expect(throws: Self.unsupported) { try db.export(to: dir.path("enc.db"), cipher: .passphrase("k")) }
        #expect(throws: Self.unsupported) { try db.attach(path: path, as: "again", cipher: .passphrase("k")) }
        #expect(throws: Self.unsupported) { try DatabasePool(path: path, configuration: .init(cipher: .passphrase("k"))) }
        #expect(try db.cipherSettingsReport().isEmpty)
    }

    @Test func plainExportAndAttachStillWork() throws {
        let dir = Sandbox()
        let db = try Connection(path: dir.path("a.db"))
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        let copy = dir.path("copy.db")
        try db.export(to: copy, cipher: nil)
        try db.attach(path: copy, as: "copy")
        #expect(try db.scalar("SELECT x FROM copy.t", as: Int.self) == 1)
    }
}

/// Plain export works with either engine.
@Suite(.timeLimit(.minutes(3)))
struct PlainExportTests {
    @Test func exportOfAPlainDatabaseIsAPlainCopy() throws {
        let dir = Sandbox()
        let db = try Connection(path: dir.path("a.db"))
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES ('copied')")
        let copy = dir.path("copy.db")
        try db.export(to: copy, cipher: nil)
        #expect(try fileHeader(copy) == plainHeader)
        #expect(try Connection(path: copy).scalar("SELECT x FROM t", as: String.self) == "copied")
        #expect(throws: SQLiteError.invalidArguments("export needs a new file, but \(copy) exists")) {
            try db.export(to: copy, cipher: nil)
        }
    }
}
