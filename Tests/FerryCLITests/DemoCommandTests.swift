#if CommandLineTool
import FerrySQLite
import Foundation
import Testing
import Ferry

/// `ferry demo`, the README's main job, on a small table: plain and encrypted.
@Suite(.timeLimit(.minutes(3)))
struct DemoCommandTests {
    @Test(arguments: SQLiteEngine.supportsEncryption ? [false, true] : [false])
    func demoMigratesVerifiesAndCleansUp(encrypted: Bool) throws {
        let fixture = try Fixture(rows: 1)
        let directory = fixture.path("demo")
        var arguments = ["demo", "--rows", "30000", "--directory", directory]
        if encrypted { arguments.append("--encrypted") }
        let result = try CLI.run(arguments, in: fixture.directory)
        #expect(result.status == 0, "\(result)")
        // Half of the 2000 conversations move: 15,000 rows.
        #expect(result.stdout.contains("registered plan: 15000 rows to move"), "\(result)")
        #expect(result.stdout.contains("migrated 15000 rows"), "\(result)")
        #expect(result.stdout.contains("cleaned legacy.db: 15000 moved rows deleted"), "\(result)")
        #expect(result.stdout.contains("15000 rows left in legacy.db, checksums match: OK"), "\(result)")
        // The databases are where the demo was told to put them, readable with the demo's keys only when encrypted.
        let legacy = directory + "/legacy.db"
        let plain = try? Connection(path: legacy, configuration: .init(readOnly: true, createIfMissing: false, journalMode: .keep))
        let readable = (try? plain?.scalar("SELECT count(*) FROM messages", as: Int.self)) ?? nil
        #expect(encrypted ? readable == nil : readable == 15000)
    }

    /// `--prepare-only` writes the legacy database and a plan file that `ferry` (and the example
    /// service) can run; nothing is migrated yet.
    @Test(arguments: SQLiteEngine.supportsEncryption ? [false, true] : [false])
    func prepareOnlyWritesTheDataAndAPlanFileThatRuns(encrypted: Bool) throws {
        let fixture = try Fixture(rows: 1)
        let directory = fixture.path("prepared")
        var arguments = ["demo", "--prepare-only", "--rows", "4000", "--directory", directory]
        if encrypted { arguments.append("--encrypted") }
        let prepared = try CLI.run(arguments, in: fixture.directory)
        #expect(prepared.status == 0, "\(prepared)")
        #expect(!FileManager.default.fileExists(atPath: directory + "/app.db"))
        let file = try MigrationPlanFile.load(path: directory + "/plan.json")
        #expect(file.plan.mappings.map(\.table.filter) == ["conversation_id < 1000"])
        #expect((file.targetCipher != nil) == encrypted)

        let status = try CLI.run(["status", "--plan", directory + "/plan.json"], in: fixture.directory)
        #expect(status.status == 0 && status.stdout.contains("2000 left"), "\(status)")  // ids 1...999, 2000...2999 and 4000: conversations below 1000
        let run = try CLI.run(["run", "--plan", directory + "/plan.json"], in: fixture.directory)
        #expect(run.status == 0, "\(run)")
        let database = try FerryDatabase(path: file.targetPath, configuration: .init(cipher: file.targetCipher))
        defer { database.close() }
        #expect(try database.isMigrated)
        #expect(try database.read { db in try db.scalar("SELECT count(*) FROM messages", as: Int.self) } == 2000)
    }

    @Test func prepareOnlyNeedsADirectory() throws {
        let fixture = try Fixture(rows: 1)
        let result = try CLI.run(["demo", "--prepare-only"], in: fixture.directory)
        #expect(result.status == 64 && result.stderr.contains("--prepare-only needs --directory DIR"), "\(result)")
    }
}
#endif
