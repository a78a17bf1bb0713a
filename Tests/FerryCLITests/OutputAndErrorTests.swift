#if CommandLineTool
import FerrySQLite
import Foundation
import Testing
import Ferry

/// What `ferry` prints when it fails: one line on standard error (SQLite's own diagnostics only
/// with `--verbose`), naming the file; exit status 1 and never a crash when standard output or
/// error cannot be written; and a failed command leaves a rollback-journal target as it was.
@Suite(.timeLimit(.minutes(2)))
struct OutputAndErrorTests {
    /// A database whose schema page is damaged (SQLite reports it malformed, and logs warnings).
    func makeMalformed(_ fixture: Fixture, name: String = "broken.db") throws {
        try fixture.withConnection(name) { db in
            try db.execute("PRAGMA journal_mode = DELETE")
            try db.execute("CREATE TABLE t(x); CREATE INDEX t_x ON t(x)")
            try db.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) INSERT INTO t SELECT printf('%0500d', i) FROM n")
        }
        let handle = try #require(FileHandle(forUpdatingAtPath: fixture.path(name)))
        try handle.seek(toOffset: 100)
        try handle.write(contentsOf: Data([0x0D, 0x00, 0x00, 0x00, 0x09] + [UInt8](repeating: 0x99, count: 200)))
        try handle.close()
    }

    /// A rollback-journal target (`journal_mode = DELETE`) registered with the fixture's plan.
    func makeDeleteModeTarget(_ fixture: Fixture) throws {
        try fixture.withConnection("app.db") { db in
            try db.execute("PRAGMA journal_mode = DELETE")
            try db.execute("CREATE TABLE settings(key TEXT PRIMARY KEY, value TEXT)")
        }
    }

    @Test func failuresPrintOneLineNamingTheFile() throws {
        let fixture = try Fixture(rows: 10)
        try makeMalformed(fixture)
        for command in [["status", "broken.db"], ["step", "broken.db"], ["verify", "broken.db"], ["shell", "broken.db"]] {
            let result = try CLI.run(command, in: fixture.directory, input: "SELECT 1;\n")
            expectOneLineError(result, containing: "broken.db")
            #expect(result.stderr.contains("malformed"), "\(command): \(result)")
        }
        // With --verbose, SQLite's own diagnostics come too.
        let verbose = try CLI.run(["status", "broken.db", "--verbose"], in: fixture.directory)
        #expect(verbose.status == 1)
        #expect(verbose.stderrLines.count > 1, "\(verbose)")
        #expect(verbose.stderrLines.filter { $0.hasPrefix("error: ") }.count == 1, "\(verbose)")
        // Other failures: one line each.
        try fixture.writePlan("bad.json", filter: "random() > 0")
        expectOneLineError(try fixture.ferry("plan", "apply", "bad.json"), containing: "random()")
        expectOneLineError(try fixture.ferry("status", "nosuch.db"), containing: "nosuch.db")
        expectOneLineError(try fixture.ferry("status", "/dev/null"), containing: "/dev/null")
    }

    @Test func unwritableStandardStreamsEndWithStatusOne() throws {
        let fixture = try Fixture(rows: 10)
        try fixture.writePlan()
        #expect(try fixture.ferry("plan", "apply", "plan.json").status == 0)
        // Output that cannot be written: status 1, no crash, whichever stream it is.
        for (out, err) in [("/dev/full", "/dev/null"), ("/dev/null", "/dev/full"), ("/dev/full", "/dev/full")] {
            let status = try CLI.runWritingTo(stdout: out, stderr: err, ["status", "app.db"], in: fixture.directory)
            #expect(!status.signaled, "stdout \(out), stderr \(err)")
            #expect(status.status == (out == "/dev/full" ? 1 : 0), "stdout \(out), stderr \(err): \(status)")
        }
        // A failing command whose error cannot be written: status 1, no crash.
        let failing = try CLI.runWritingTo(stdout: "/dev/null", stderr: "/dev/full", ["status", "nosuch.db"], in: fixture.directory)
        #expect(!failing.signaled && failing.status == 1, "\(failing)")
    }

    @Test func aFailedCommandLeavesTheJournalModeAsItWas() throws {
        let fixture = try Fixture(rows: 10)
        try makeDeleteModeTarget(fixture)
        #expect(try fixture.journalMode() == "delete")
        // A plan the target refuses, a step through a refused plan, a failing verification.
        try fixture.writePlan("bad.json", filter: "nosuch > 1")
        expectOneLineError(try fixture.ferry("plan", "apply", "bad.json"), containing: "nosuch")
        #expect(try fixture.journalMode() == "delete")
        expectOneLineError(try fixture.ferry("step", "--plan", "bad.json"), containing: "nosuch")
        #expect(try fixture.journalMode() == "delete")
        #expect(!FileManager.default.fileExists(atPath: fixture.path("app.db-wal")))
        // A command that succeeds leaves WAL mode (Ferry reads while it writes).
        try fixture.writePlan()
        #expect(try fixture.ferry("plan", "apply", "plan.json").status == 0)
        #expect(try fixture.journalMode() == "wal")
        // A malformed rollback-journal database stays one after a failed command.
        try makeMalformed(fixture, name: "broken.db")
        #expect(try fixture.ferry("verify", "broken.db").status != 0)
        let raw = try Data(contentsOf: URL(fileURLWithPath: fixture.path("broken.db")))
        #expect(raw[18] == 1 && raw[19] == 1, "header says WAL after a failed command")  // 1 = rollback journal, 2 = WAL
    }

    @Test(.enabled(if: SQLiteEngine.supportsEncryption, "encryption needs the SQLCipher trait"))
    func aFailedCommandLeavesAnEncryptedTargetsJournalModeAsItWas() throws {
        let fixture = try Fixture(rows: 10)
        let cipher = Cipher.passphrase("journal-key")
        try fixture.withConnection("secret.db", cipher: cipher) { db in
            try db.execute("PRAGMA journal_mode = DELETE")
            try db.execute("CREATE TABLE settings(key TEXT PRIMARY KEY, value TEXT)")
        }
        // `verify` of a target whose registered source is gone fails after opening the target.
        try fixture.write("plan.json", """
            { "target": { "path": "secret.db", "key": "journal-key" },
              "sources": [ { "path": "legacy.db", "tables": [ { "source": "messages", "target": "messages" } ] } ] }
            """)
        #expect(try fixture.ferry("plan", "apply", "plan.json").status == 0)
        try fixture.withConnection("secret.db", cipher: cipher) { db in _ = try db.fetchAll("PRAGMA journal_mode = DELETE") }
        try FileManager.default.removeItem(atPath: fixture.path("legacy.db"))
        let result = try fixture.ferry("step", "secret.db", "--key", "journal-key")
        expectOneLineError(result, containing: "legacy.db")
        let db = try Connection(path: fixture.path("secret.db"),
                                configuration: .init(readOnly: true, createIfMissing: false, cipher: cipher, journalMode: .keep))
        defer { db.close() }
        #expect(try db.scalar("PRAGMA journal_mode", as: String.self) == "delete")
    }
}
#endif
