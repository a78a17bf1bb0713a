#if CommandLineTool
import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
import Ferry

/// Runs the built `ferry` executable as a subprocess.
enum CLI {
    /// What a run of `ferry` printed and returned.
    struct Result: CustomStringConvertible {
        let status: Int32
        let stdout: String
        let stderr: String

        /// The non-empty lines of standard error.
        var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }

        var description: String { "status \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
    }

    /// The `ferry` executable next to the test bundle, or in `.build/debug`.
    static let executable = builtExecutable(
        named: "ferry",
        packageRoot: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent())

    /// Runs `ferry arguments...` in `directory` and waits for it.
    static func run(_ arguments: [String], in directory: URL, environment: [String: String] = [:], input: String? = nil) throws -> Result {
        let process = try makeProcess(arguments, in: directory, environment: environment)
        let out = Pipe()
        let err = Pipe()
        let inPipe = Pipe()
        process.standardOutput = out
        process.standardError = err
        if input != nil { process.standardInput = inPipe }
        try process.run()
        if let input {
            inPipe.fileHandleForWriting.write(Data(input.utf8))
            try inPipe.fileHandleForWriting.close()
        }
        let errData = LockedData()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errData.append(err.fileHandleForReading.readDataToEndOfFile())
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData.data, as: UTF8.self))
    }

    /// Starts `ferry arguments...`, sends SIGINT once its standard output contains `marker`, and
    /// waits for it to exit.
    static func runInterrupting(_ arguments: [String], in directory: URL, when marker: String) throws -> Result {
        let process = try makeProcess(arguments, in: directory, environment: [:])
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let outData = LockedData()
        let errData = LockedData()
        out.fileHandleForReading.readabilityHandler = { handle in outData.append(handle.availableData) }
        err.fileHandleForReading.readabilityHandler = { handle in errData.append(handle.availableData) }
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline && !String(decoding: outData.data, as: UTF8.self).contains(marker) {
            Thread.sleep(forTimeInterval: 0.005)
        }
        if process.isRunning { process.interrupt() }
        process.waitUntilExit()
        out.fileHandleForReading.readabilityHandler = nil
        err.fileHandleForReading.readabilityHandler = nil
        outData.append(out.fileHandleForReading.readDataToEndOfFile())
        errData.append(err.fileHandleForReading.readDataToEndOfFile())
        return Result(status: process.terminationStatus, stdout: String(decoding: outData.data, as: UTF8.self),
                      stderr: String(decoding: errData.data, as: UTF8.self))
    }

    /// Runs `ferry arguments...` with standard output and error written to the given files (e.g.
    /// `/dev/full`) and returns how it ended: its status, and whether a signal ended it.
    static func runWritingTo(stdout: String, stderr: String, _ arguments: [String], in directory: URL) throws -> (status: Int32, signaled: Bool) {
        let process = try makeProcess(arguments, in: directory, environment: [:])
        process.standardOutput = try #require(FileHandle(forWritingAtPath: stdout))
        process.standardError = try #require(FileHandle(forWritingAtPath: stderr))
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, process.terminationReason == .uncaughtSignal)
    }

    private static func makeProcess(_ arguments: [String], in directory: URL, environment: [String: String]) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardInput = FileHandle.nullDevice
        return process
    }
}

/// Bytes appended from several threads.
final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var storage = Data()
    func append(_ data: Data) { lock.lock(); storage.append(data); lock.unlock() }
    var data: Data { lock.lock(); defer { lock.unlock() }; return storage }
}

/// A temporary directory with a legacy database and plan files, removed at deinit.
final class Fixture {
    private let sandbox = Sandbox()
    var directory: URL { sandbox.url }

    /// A directory holding `legacy.db` with `rows` messages (`conversation_id = id % 20`, so the
    /// default filter `conversation_id < 10` selects half of them).
    /// `legacyJournal` is the legacy file's journal mode.
    init(rows: Int = 600, legacyCipher: Cipher? = nil, legacyJournal: DatabaseConfiguration.JournalMode = .wal) throws {
        let legacy = try Connection(path: path("legacy.db"), configuration: .init(cipher: legacyCipher, journalMode: legacyJournal))
        defer { legacy.close() }
        try legacy.execute("CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, body TEXT)")
        try legacy.execute("""
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
            INSERT INTO messages SELECT x, x % 20, 'message ' || x FROM n
            """, [.integer(Int64(rows))])
    }


    /// The absolute path of a file in the fixture directory.
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Writes a file in the fixture directory.
    func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: directory.appendingPathComponent(name))
    }

    /// Writes `plan.json`: app.db <- legacy.db messages where `filter`.
    @discardableResult
    func writePlan(_ name: String = "plan.json", sourceTable: String = "messages", filter: String = "conversation_id < 10",
                   extraTableField: String = "", extraSourceField: String = "") throws -> String {
        try write(name, """
            { "target": { "path": "app.db" },
              "sources": [ { "path": "legacy.db"\(extraSourceField),
                  "tables": [ { "source": "\(sourceTable)", "target": "messages", "filter": "\(filter)"\(extraTableField) } ] } ],
              "schedule": { "budgetMilliseconds": 10 } }
            """)
        return name
    }

    /// Runs `ferry` in the fixture directory.
    func ferry(_ arguments: String..., environment: [String: String] = [:]) throws -> CLI.Result {
        try CLI.run(arguments, in: directory, environment: environment)
    }

    /// Runs `ferry arguments...` with `input` on standard input.
    func ferry(_ arguments: String..., input: String) throws -> CLI.Result {
        try CLI.run(arguments, in: directory, input: input)
    }

    /// Every table's schema and rows, as text (a missing file dumps as `<no file>`).
    func dump(_ name: String, cipher: Cipher? = nil) throws -> String {
        guard FileManager.default.fileExists(atPath: path(name)) else { return "<no file>" }
        let db = try Connection(path: path(name), configuration: .init(readOnly: true, createIfMissing: false, cipher: cipher, journalMode: .keep))
        defer { db.close() }
        var out = ""
        for row in try db.fetchAll("SELECT type, name, sql FROM sqlite_master ORDER BY type, name") {
            out += "\(row)\n"
            if try row.get(0, as: String.self) == "table" {
                let table: String = try row.get(1)
                // Sorted as text: WITHOUT ROWID tables have no rowid to order by.
                let rows = try db.fetchAll("SELECT * FROM \(Connection.quoteIdentifier(table))").map { "  \($0)\n" }.sorted()
                out += rows.joined()
            }
        }
        return out
    }

    /// The integer a query returns on a database of the fixture.
    func scalar(_ name: String, _ sql: String, cipher: Cipher? = nil) throws -> Int? {
        try withConnection(name, cipher: cipher) { db in try db.scalar(sql, as: Int.self) }
    }

    /// Runs `body` on a plain connection to a database of the fixture.
    func withConnection<T>(_ name: String, cipher: Cipher? = nil, _ body: (Connection) throws -> T) throws -> T {
        let db = try Connection(path: path(name), configuration: .init(cipher: cipher))
        defer { db.close() }
        return try body(db)
    }

    /// The journal mode of database `name`, read without changing it (read-only, `journalMode: .keep`).
    func journalMode(of name: String = "app.db") throws -> String? {
        let db = try Connection(path: path(name), configuration: .init(readOnly: true, createIfMissing: false, journalMode: .keep))
        defer { db.close() }
        return try db.scalar("PRAGMA journal_mode", as: String.self)
    }
}

/// Expects a failed run: non-zero status, exactly one line on standard error starting with
/// `error: ` and containing `fragment`, and no stack trace.
func expectOneLineError(_ result: CLI.Result, containing fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(result.status != 0, "\(result)", sourceLocation: sourceLocation)
    #expect(result.stderrLines.count == 1, "\(result)", sourceLocation: sourceLocation)
    #expect(result.stderr.hasPrefix("error: "), "\(result)", sourceLocation: sourceLocation)
    #expect(result.stderr.contains(fragment), "\(result)", sourceLocation: sourceLocation)
}

/// Parses a JSON object printed by `ferry ... --json`.
func parseJSONObject(_ text: String) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
    return try #require(object as? [String: Any])
}
#endif
