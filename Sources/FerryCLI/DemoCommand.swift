import ArgumentParser
import Foundation
import Ferry

/// `ferry demo`: the README's main job.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run a live migration demo on a generated database."
    )

    @Option(help: "Rows in the generated legacy table.")
    var rows: Int = 100_000

    @Flag(help: "Encrypt the legacy database with SQLCipher.")
    var encrypted = false

    func run() async throws {
        print(FerryVersion.report)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-demo-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("legacy.db").path
        let cipher: Cipher? = encrypted ? .passphrase("demo-passphrase") : nil
        let db = try Connection(path: path, configuration: .init(cipher: cipher))
        try db.execute("CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER, body TEXT)")
        try db.execute("""
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
            INSERT INTO messages SELECT x, x % 100, 'message ' || x FROM n
            """, [.integer(Int64(rows))])
        let count = try db.scalar("SELECT count(*) FROM messages", as: Int.self) ?? 0
        print("created \(encrypted ? "an encrypted" : "a plain") legacy database with \(count) rows")
    }
}
