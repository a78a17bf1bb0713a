#if CommandLineTool
import Foundation
import Testing
import Ferry

/// `ferry status`, `step` and `run` on a target whose source file was replaced by another
/// database: one error line naming the file and what differs, nothing changed.
@Suite(.timeLimit(.minutes(2)))
struct SourceIdentityCommandTests {
    @Test func commandsRefuseAnotherFileInTheSourcesPlace() throws {
        let fixture = try Fixture(rows: 40)
        try fixture.writePlan()
        #expect(try fixture.ferry("step", "--plan", "plan.json").status == 0)
        // Another database with the same table, renamed over the source.
        try fixture.withConnection("other.db") { db in
            try db.execute("CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, body TEXT)")
            try db.execute("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 60) INSERT INTO messages SELECT x, x % 20, 'other ' || x FROM n")
            try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        #expect(rename(fixture.path("other.db"), fixture.path("legacy.db")) == 0)
        let app = try fixture.dump("app.db")
        let legacy = try fixture.dump("legacy.db")
        for command in [["status", "--plan", "plan.json"], ["step", "--plan", "plan.json"], ["run", "--plan", "plan.json"], ["status", "app.db"]] {
            let result = try CLI.run(command, in: fixture.directory)
            expectOneLineError(result, containing: "is not the registered file")
            #expect(result.stderr.contains(fixture.path("legacy.db")), "\(result)")
            #expect(try fixture.dump("app.db") == app, "\(command)")
            #expect(try fixture.dump("legacy.db") == legacy, "\(command)")
        }
    }
}
#endif
