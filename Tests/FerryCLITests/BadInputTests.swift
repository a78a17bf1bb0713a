#if CommandLineTool
import Foundation
import Testing
import Ferry

/// Bad input: a one-line error on standard error, a non-zero exit, and no database changed.
@Suite(.timeLimit(.minutes(2)))
struct BadInputTests {
    /// Applies `plan` and expects a one-line error containing `fragment` with nothing changed.
    private func expectRefused(_ fixture: Fixture, plan: String, containing fragment: String,
                               sourceLocation: SourceLocation = #_sourceLocation) throws {
        let app = try fixture.dump("app.db")
        let legacy = try fixture.dump("legacy.db")
        let result = try fixture.ferry("plan", "apply", plan)
        expectOneLineError(result, containing: fragment, sourceLocation: sourceLocation)
        #expect(try fixture.dump("app.db") == app, sourceLocation: sourceLocation)
        #expect(try fixture.dump("legacy.db") == legacy, sourceLocation: sourceLocation)
    }

    /// A target that already holds data (and no catalog), so that "unchanged" means something.
    private func makeExistingTarget(_ fixture: Fixture) throws {
        try fixture.withConnection("app.db") { db in
            try db.execute("CREATE TABLE settings(key TEXT PRIMARY KEY, value TEXT)")
            try db.execute("INSERT INTO settings VALUES ('theme', 'dark')")
        }
    }

    @Test func malformedPlan() throws {
        let fixture = try Fixture()
        try fixture.write("bad.json", #"{ "target": { "path": "app.db" }, "sources": [ "#)
        try expectRefused(fixture, plan: "bad.json", containing: "malformed JSON")
        #expect(!FileManager.default.fileExists(atPath: fixture.path("app.db")))
    }

    @Test func planWithWrongTypeOrMissingField() throws {
        let fixture = try Fixture()
        try fixture.write("type.json", #"{ "target": { "path": 3 }, "sources": [] }"#)
        try expectRefused(fixture, plan: "type.json", containing: "target.path: expected a string")
        try fixture.write("missing.json", #"{ "target": { "path": "app.db" } }"#)
        try expectRefused(fixture, plan: "missing.json", containing: "missing field \"sources\"")
    }

    /// A NUL byte in a path field used to create the target as `app.db%00.x`.
    @Test func planPathWithANulByte() throws {
        let fixture = try Fixture()
        try fixture.write("nul.json", #"{ "target": { "path": "app.db\u0000.x" }, "sources": [ { "path": "legacy.db", "tables": [ { "source": "messages" } ] } ] }"#)
        try expectRefused(fixture, plan: "nul.json", containing: "target.path: contains a NUL byte")
        let files = try FileManager.default.contentsOfDirectory(atPath: fixture.path("."))
        #expect(!files.contains { $0.hasPrefix("app.db") }, "\(files)")
    }

    @Test func unknownFieldInPlan() throws {
        let fixture = try Fixture()
        try makeExistingTarget(fixture)
        try fixture.writePlan("unknown.json", extraTableField: #", "colour": "blue""#)
        try expectRefused(fixture, plan: "unknown.json", containing: "sources[0].tables[0]: unknown field \"colour\"")
        try fixture.write("cipher.json", """
            { "target": { "path": "app.db", "key": "k", "cipher": { "compatibility": 4, "hmac": "sha1" } }, "sources": [] }
            """)
        try expectRefused(fixture, plan: "cipher.json", containing: "target.cipher: unknown field \"hmac\"")
    }

    @Test func unknownTable() throws {
        let fixture = try Fixture()
        try makeExistingTarget(fixture)
        try fixture.writePlan("table.json", sourceTable: "nosuch")
        try expectRefused(fixture, plan: "table.json", containing: "no such table")
        // Also when the target file does not exist yet: it is not left behind.
        let fresh = try Fixture()
        try fresh.writePlan("table.json", sourceTable: "nosuch")
        try expectRefused(fresh, plan: "table.json", containing: "no such table")
        #expect(!FileManager.default.fileExists(atPath: fresh.path("app.db")))
    }

    @Test(arguments: ["conversation_id <", "no_such_column = 1", "1); DROP TABLE messages; --"])
    func invalidFilter(filter: String) throws {
        let fixture = try Fixture()
        try makeExistingTarget(fixture)
        try fixture.writePlan("filter.json", filter: filter)
        try expectRefused(fixture, plan: "filter.json", containing: "invalid filter")
    }

    @Test func missingFiles() throws {
        let fixture = try Fixture()
        expectOneLineError(try fixture.ferry("status", "nope.db"), containing: "no such database: nope.db")
        #expect(!FileManager.default.fileExists(atPath: fixture.path("nope.db")))
        expectOneLineError(try fixture.ferry("run", "nope.db"), containing: "no such database: nope.db")
        expectOneLineError(try fixture.ferry("verify", "nope.db"), containing: "no such database: nope.db")
        expectOneLineError(try fixture.ferry("plan", "apply", "nope.json"), containing: "no such plan file: nope.json")
        expectOneLineError(try fixture.ferry("lint", "nope.sql"), containing: "no such file or directory: nope.sql")

        // A plan whose source file is missing.
        try makeExistingTarget(fixture)
        try fixture.write("source.json", """
            { "target": { "path": "app.db" }, "sources": [ { "path": "gone.db", "tables": [ { "source": "messages" } ] } ] }
            """)
        try expectRefused(fixture, plan: "source.json", containing: "no such file: \(fixture.path("gone.db"))")
        #expect(!FileManager.default.fileExists(atPath: fixture.path("gone.db")))
    }

    @Test(.enabled(if: SQLiteEngine.supportsEncryption))
    func wrongKey() throws {
        let fixture = try Fixture()
        let cipher = Cipher.passphrase("right")
        try fixture.withConnection("app.db", cipher: cipher) { db in
            try db.execute("CREATE TABLE settings(key TEXT PRIMARY KEY, value TEXT)")
            try db.execute("INSERT INTO settings VALUES ('theme', 'dark')")
        }
        let before = try fixture.dump("app.db", cipher: cipher)
        for command in ["status", "run", "step", "verify"] {
            expectOneLineError(try fixture.ferry(command, "app.db", "--key", "wrong"), containing: "wrong key or not a database: app.db")
        }
        expectOneLineError(try fixture.ferry("status", "app.db"), containing: "wrong key or not a database: app.db")
        // A plain database opened with a key.
        expectOneLineError(try fixture.ferry("status", "legacy.db", "--key", "k"), containing: "wrong key or not a database: legacy.db")
        // Through a plan file.
        try fixture.write("key.json", """
            { "target": { "path": "app.db", "key": "wrong" }, "sources": [ { "path": "legacy.db", "tables": [ { "source": "messages" } ] } ] }
            """)
        expectOneLineError(try fixture.ferry("plan", "apply", "key.json"), containing: "wrong key or not a database")
        #expect(try fixture.dump("app.db", cipher: cipher) == before)
    }

    @Test func notADatabase() throws {
        let fixture = try Fixture()
        try fixture.write("text.db", "this is not a database, just some text that is long enough to fill a header block....")
        expectOneLineError(try fixture.ferry("status", "text.db"), containing: "not a database: text.db")
    }

    @Test func usageErrorsAreOneLine() throws {
        let fixture = try Fixture()
        expectOneLineError(try fixture.ferry("status"), containing: "give a database file or --plan PLAN.json")
        expectOneLineError(try fixture.ferry("status", "legacy.db", "--plan", "p.json"), containing: "not both")
        expectOneLineError(try fixture.ferry("step", "legacy.db", "--count", "0"), containing: "--count must be at least 1")
        expectOneLineError(try fixture.ferry("status", "legacy.db", "--frobnicate"), containing: "frobnicate")
        expectOneLineError(try fixture.ferry("nosuchcommand"), containing: "nosuchcommand")
        let help = try fixture.ferry("--help")
        #expect(help.status == 0)
        #expect(help.stdout.contains("plan"))
    }
}
#endif
