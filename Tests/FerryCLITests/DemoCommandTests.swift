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
}
