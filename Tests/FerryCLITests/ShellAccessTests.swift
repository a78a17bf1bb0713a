#if CommandLineTool
import Foundation
import Testing
import Ferry

/// `ferry shell` is the app's connection in an operator's hands: what `FerryConnection` refuses
/// (Ferry's catalog, attached sources, registered files, keys, exporting functions) it refuses too,
/// one statement at a time, and the migration then completes with every row exactly once.
@Suite(.timeLimit(.minutes(2)))
struct ShellAccessTests {
    @Test func bypassesAreRefusedAndTheMigrationLosesNothing() throws {
        let fixture = try Fixture(rows: 40)
        try fixture.writePlan()  // messages where conversation_id < 10: 20 rows
        let refused = [
            "DELETE FROM ferry_src_1.messages WHERE id < 30;",
            "UPDATE ferry_migration_tables SET cursor = 1000;",
            "INSERT INTO ferry_migration_moved(target, source_rowid) VALUES ('messages', 5);",
            "DROP TABLE ferry_src_1.messages;",
            "PRAGMA ferry_src_1.rekey = 'x';",
            "PRAGMA writable_schema = ON;",
            "ATTACH 'legacy.db' AS x;",
            "ATTACH 'app.db' AS again;",
            "SELECT load_extension('x');",
        ]
        let result = try fixture.ferry("shell", "--plan", "plan.json", "--json", input: """
            SELECT count(*) FROM messages;
            .step
            \(refused.joined(separator: "\n"))
            .step all
            SELECT count(*), sum(id) FROM messages;
            """)
        // Every refused statement is reported; the shell goes on, then exits 1.
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr == "error: \(refused.count) statement(s) or command(s) failed\n", "\(result)")
        let lines = try result.stdout.split(separator: "\n").map { try parseJSONObject(String($0)) }
        try #require(lines.count == refused.count + 4, "\(result.stdout)")
        #expect((lines[0]["rows"] as? [[Int]]) == [[20]])
        for (index, sql) in refused.enumerated() {
            let line = lines[index + 2]
            #expect(line["ok"] as? Bool == false, "\(sql): \(line)")
            let error = line["error"] as? [String: Any]
            #expect(error?["code"] as? Int == 23, "\(sql): \(line)")  // SQLITE_AUTH
            #expect((error?["message"] as? String)?.contains("refused") == true, "\(sql): \(line)")
        }
        #expect(lines[refused.count + 2]["finished"] as? Bool == true, "\(result.stdout)")
        let ids = (1...40).filter { $0 % 20 < 10 }
        #expect((lines[refused.count + 3]["rows"] as? [[Int]]) == [[ids.count, ids.reduce(0, +)]], "\(result.stdout)")
        #expect(try fixture.scalar("app.db", "SELECT count(DISTINCT id) FROM messages") == ids.count)
    }

    /// Column names in the shell's header are those of the finished table.
    @Test func headerNamesAreThoseOfTheFinishedTable() throws {
        let fixture = try Fixture(rows: 40)
        try fixture.writePlan()
        let result = try fixture.ferry("shell", "--plan", "plan.json", input: """
            SELECT (SELECT max(id) FROM messages), rowid, Count( * ) FROM messages WHERE id = 1;
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.split(separator: "\n").first == "(SELECT max(id) FROM messages) | id | Count( * )", "\(result.stdout)")
    }
}
#endif
