#if CommandLineTool
import Foundation
import Testing
import Ferry

/// `DROP TABLE` of a migrating table through `ferry shell`: the table's migration ends, and every
/// command keeps working on the database afterwards.
@Suite(.timeLimit(.minutes(2)))
struct DropTableCommandTests {
    @Test func everyCommandWorksAfterAMigratingTableWasDropped() throws {
        let fixture = try Fixture(rows: 60)
        try fixture.writePlan()  // messages where conversation_id < 10
        let shell = try fixture.ferry("shell", "--plan", "plan.json", input: ".step\nDROP TABLE messages;\nSELECT count(*) FROM messages;\n")
        #expect(shell.status == 1, "\(shell)")  // the SELECT failed
        #expect(shell.stdout.contains("error: ") && shell.stdout.contains("no such table"), "\(shell)")
        for command in [["status", "app.db"], ["status", "--plan", "plan.json"], ["step", "app.db", "--count", "3"],
                        ["run", "--plan", "plan.json"], ["verify", "app.db"], ["status", "app.db", "--json"]] {
            let result = try CLI.run(command, in: fixture.directory)
            #expect(result.status == 0, "\(command): \(result)")
            #expect(result.stderr.isEmpty, "\(command): \(result)")
        }
        // The rows the dropped table owned left the source; the others stayed.
        #expect(try fixture.scalar("legacy.db", "SELECT count(*) FROM messages") == (1...60).filter { $0 % 20 >= 10 }.count)
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM sqlite_master WHERE name = 'messages'") == 0)
    }
}
#endif
