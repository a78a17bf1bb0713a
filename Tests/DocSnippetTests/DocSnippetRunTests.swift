import DocSnippets
import Ferry
import FerrySQLite
import FerryTestSupport
import Foundation
import Testing

/// Runs the documents' snippets (each scope of statements, `docSnippetScopes`) that are short and
/// safe to run, each in a directory of its own holding the files it names (`legacy.db`, ...), by
/// `DocSnippetRunner` in a process of its own: the documents name relative paths, and the tests'
/// process never changes its current directory. Every other scope is listed with the reason it is
/// only compiled. One run at a time, and in `make test`'s serial phase (`SERIAL`): each waits for
/// its process on one of the few threads of Swift's cooperative pool.
@Suite(.serialized) struct DocSnippetRunTests {
    /// What a run needs in its directory before it starts.
    enum Fixture: Sendable {
        /// Nothing: the snippet creates what it uses.
        case none
        /// `legacy.db` with `messages(id, conversation_id, body, sent_at)`, encrypted with `cipher`.
        case legacy(cipher: Cipher?)
        /// `app.db` with `people(id, name, age)`, the table the online rebuild reshapes.
        case people
    }

    static let sqlcipher3 = CipherSettings.sqlcipher3

    /// The scopes run, with what they need.
    static let runs: [String: Fixture] = {
        var runs: [String: Fixture] = [
            "README/main": .legacy(cipher: .passphrase("old-key", settings: sqlcipher3)),
            "Concepts/main": .legacy(cipher: .passphrase("old", settings: sqlcipher3)),
            "Encryption/main": .legacy(cipher: .passphrase("old", settings: sqlcipher3)),
            "GettingStarted/main": .legacy(cipher: nil),
            "Ferry/main": .legacy(cipher: nil),
            "SchemaMigrations/main": .none,
            "SchemaMigrations/merged": .none,
            "SchemaMigrations/lint": .none,
            "SchemaMigrations/rebuild": .people,
            "ComingFromGRDB/main": .none,
            "ComingFromGRDB/async": .none,
        ]
        #if Metrics
        runs["FerryMetrics/main"] = Fixture.none
        #endif
        return runs
    }()

    /// The scopes only compiled, and why.
    static let compiledOnly: [String: String] = {
        var scopes = ["GettingStarted/observe": "observes a query until the task is cancelled"]
        #if ServiceLifecycle
        scopes["Services/main"] = "runs a service group until SIGTERM, and reads plan.json"
        #endif
        return scopes
    }()

    @Test func everyScopeIsRunOrSaysWhyNot() {
        let listed = Set(Self.runs.keys).union(Self.compiledOnly.keys)
        #expect(Set(docSnippetScopes.keys).subtracting(listed).sorted() == [], "add the new scopes to runs or compiledOnly")
        #expect(listed.subtracting(docSnippetScopes.keys).sorted() == [], "scopes no document has any more")
    }

    /// The scopes whose files are encrypted (the system SQLite has no encryption).
    static func needsEncryption(_ scope: String) -> Bool {
        if case .legacy(cipher: .some) = runs[scope] { return true }
        return false
    }

    @Test(arguments: runs.keys.filter { !needsEncryption($0) }.sorted()) func scopeRuns(_ scope: String) throws {
        try run(scope)
    }

    @Test(.enabled(if: SQLiteEngine.supportsEncryption), arguments: runs.keys.filter(needsEncryption).sorted())
    func encryptedScopeRuns(_ scope: String) throws {
        try run(scope)
    }

    func run(_ scope: String) throws {
        let fixture = try #require(Self.runs[scope])
        let box = Sandbox()
        try Self.prepare(fixture, in: box)
        let (status, output) = try Self.run(scope, in: box.url)
        #expect(status == 0, "\(scope) failed:\n\(output)")
    }

    static func prepare(_ fixture: Fixture, in box: Sandbox) throws {
        switch fixture {
        case .none:
            break
        case .legacy(let cipher):
            let db = try Connection(path: box.path("legacy.db"), configuration: .init(cipher: cipher))
            defer { db.close() }
            try db.execute("CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, body TEXT, sent_at TEXT)")
            try db.execute("""
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 30)
                INSERT INTO messages(id, conversation_id, body, sent_at) SELECT x, x % 10, 'message ' || x, NULL FROM n
                """)
        case .people:
            let db = try Connection(path: box.path("app.db"))
            defer { db.close() }
            try db.execute("""
                CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT NOT NULL, age TEXT);
                INSERT INTO people(name, age) VALUES ('Ann', '41'), ('Bob', NULL), ('Cy', 'unknown');
                """)
        }
    }

    /// Runs `DocSnippetRunner scope` in `directory`: its exit status and its output (both streams).
    static func run(_ scope: String, in directory: URL) throws -> (Int32, String) {
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let process = Process()
        process.executableURL = builtExecutable(named: "DocSnippetRunner", packageRoot: packageRoot)
        process.arguments = [scope]
        process.currentDirectoryURL = directory
        let output = directory.appendingPathComponent("output.txt")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        defer { try? handle.close() }
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        // A snippet that hangs fails the test instead of the whole run.
        let deadline = ContinuousClock.now + .seconds(120)
        while process.isRunning {
            if ContinuousClock.now > deadline {
                process.terminate()
                process.waitUntilExit()
                return (-1, "timed out after 120 s\n" + ((try? String(contentsOf: output, encoding: .utf8)) ?? ""))
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return (process.terminationStatus, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }
}
