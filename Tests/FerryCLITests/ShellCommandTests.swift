#if CommandLineTool
import Foundation
import FerrySQLite
import Testing
import Ferry

/// `ferry shell`: SQL from standard input through the migrating connection.
@Suite(.timeLimit(.minutes(2)))
struct ShellCommandTests {
    /// The JSON objects the shell printed, one per line.
    func objects(_ result: CLI.Result) throws -> [[String: Any]] {
        try result.stdout.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
    }

    @Test func jsonModeReadsAndWritesThroughTheMigration() throws {
        let fixture = try Fixture(rows: 40)
        try fixture.writePlan()  // messages where conversation_id < 10: ids 1-9, 20-29, 40
        let result = try fixture.ferry("shell", "--plan", "plan.json", "--json", input: """
            SELECT count(*) AS n, sum(id) FROM messages;
            INSERT INTO messages(conversation_id, body)
              VALUES (3, 'it''s new');
            .step
            UPDATE messages SET body = 'edited' WHERE conversation_id = 3;
            SELECT nosuch FROM messages;
            INSERT INTO messages(id, conversation_id, body) VALUES (5, 1, 'duplicate');
            SELECT 1.0 AS r, x'00ff' AS b, NULL AS z, 'a"b' AS t;
            .status
            .step all
            """)
        #expect(result.status == 1, "\(result)")  // two statements failed; the rest ran
        #expect(result.stderr == "error: 2 statement(s) or command(s) failed\n", "\(result)")
        let lines = try objects(result)
        try #require(lines.count == 9, "\(result.stdout)")
        #expect(lines[0]["columns"] as? [String] == ["n", "sum(id)"])
        #expect((lines[0]["rows"] as? [[Int]]) == [[20, 330]])
        #expect(lines[1]["changes"] as? Int == 1)
        #expect(lines[1]["lastInsertRowid"] as? Int == 41)  // above every source row, as on the finished table
        #expect(lines[2]["command"] as? String == "step")
        #expect(lines[3]["changes"] as? Int == 3)  // ids 3, 23 and the new row
        #expect(lines[4]["ok"] as? Bool == false)
        #expect((lines[4]["error"] as? [String: Any])?["code"] as? Int == 1)
        let conflict = try #require(lines[5]["error"] as? [String: Any])
        #expect(conflict["code"] as? Int == 19)
        #expect(conflict["extendedCode"] as? Int == 1555)
        #expect(result.stdout.split(separator: "\n")[6].contains(#"[[1.0,{"blob":"00ff"},null,"a\"b"]]"#), "\(result.stdout)")
        #expect(lines[7]["command"] as? String == "status")
        #expect(lines[8]["finished"] as? Bool == true)
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM messages WHERE body = 'edited'") == 3)
    }

    /// SQL's `changes()` reports the app's last write across a step and across the moves ahead of a
    /// write, as on the finished table.
    @Test func sqlChangesIgnoresStepsAndMoves() throws {
        let fixture = try Fixture(rows: 40)
        try fixture.writePlan()  // messages where conversation_id < 10: ids 1-9, 20-29, 40
        let result = try fixture.ferry("shell", "--plan", "plan.json", "--json", input: """
            UPDATE messages SET body = 'a' WHERE id IN (1, 2, 3, 4);
            .step
            SELECT changes() AS c;
            DELETE FROM messages WHERE id = 40;
            UPDATE messages SET body = 'b' || changes() WHERE id >= 20 RETURNING body;
            SELECT changes() AS c;
            """)
        #expect(result.status == 0, "\(result)")
        let lines = try objects(result)
        try #require(lines.count == 6, "\(result.stdout)")
        #expect((lines[2]["rows"] as? [[Int]]) == [[4]])
        #expect((lines[4]["rows"] as? [[String]])?.allSatisfy { $0 == ["b1"] } == true, "\(result.stdout)")
        #expect((lines[5]["rows"] as? [[Int]]) == [[10]])
    }

    /// A whole-table aggregate, which Ferry computes per arm (target rows, pending rows) and
    /// combines, answers as the finished table before and after a step.
    @Test func aggregatesCountEveryRowBeforeAndAfterAStep() throws {
        let fixture = try Fixture(rows: 40)
        try fixture.writePlan()  // messages where conversation_id < 10: ids 1-9, 20-29, 40
        let query = "SELECT count(*), max(id), sum(conversation_id), min(body) FROM messages;"
        let result = try fixture.ferry("shell", "--plan", "plan.json", "--json", input: """
            \(query)
            .step
            \(query)
            SELECT count(*) FROM messages WHERE conversation_id = 0;
            """)
        #expect(result.status == 0, "\(result)")
        let lines = try objects(result)
        try #require(lines.count == 4, "\(result.stdout)")
        for line in [lines[0], lines[2]] {
            #expect((line["rows"] as? [[Any]]).map { "\($0)" } == "\([[20, 40, 90, "message 1"]] as [[Any]])", "\(result.stdout)")
        }
        #expect(result.stdout.contains("count(*)"), "\(result.stdout)")
        #expect((lines[3]["rows"] as? [[Int]]) == [[2]], "\(result.stdout)")
    }

    /// Point statements by key answer as the finished table after a step, whether the key moved
    /// (Ferry then reads the target alone), lies outside the filter, or is still pending.
    @Test func pointStatementsByKeyAnswerAsTheFinishedTableAfterAStep() throws {
        let fixture = try Fixture(rows: 4000)
        try fixture.writePlan()  // messages where conversation_id < 10 (id % 20 < 10)
        let result = try fixture.ferry("shell", "--plan", "plan.json", "--json", input: """
            .step
            SELECT id, body FROM messages WHERE id = 3;
            SELECT id, body FROM messages WHERE id = 15;
            SELECT id, body FROM messages WHERE id = 3989;
            UPDATE messages SET body = 'edited' WHERE id = 3;
            DELETE FROM messages WHERE id = 4;
            SELECT id, body FROM messages WHERE id = 3;
            SELECT id FROM messages WHERE id = 4;
            .step all
            SELECT count(*) FROM messages WHERE id <= 20;
            """)
        #expect(result.status == 0, "\(result)")
        let lines = try objects(result)
        try #require(lines.count == 10, "\(result.stdout)")
        #expect((lines[1]["rows"] as? [[Any]]).map { "\($0)" } == "\([[3, "message 3"]] as [[Any]])", "\(result.stdout)")
        #expect((lines[2]["rows"] as? [[Any]])?.isEmpty == true, "\(result.stdout)")
        #expect((lines[3]["rows"] as? [[Any]]).map { "\($0)" } == "\([[3989, "message 3989"]] as [[Any]])", "\(result.stdout)")
        #expect(lines[4]["changes"] as? Int == 1)
        #expect(lines[5]["changes"] as? Int == 1)
        #expect((lines[6]["rows"] as? [[Any]]).map { "\($0)" } == "\([[3, "edited"]] as [[Any]])", "\(result.stdout)")
        #expect((lines[7]["rows"] as? [[Any]])?.isEmpty == true, "\(result.stdout)")
        #expect((lines[9]["rows"] as? [[Int]]) == [[9]], "\(result.stdout)")  // 1-9 and 20, without 4
    }

    /// Inserts through the shell while the table migrates, after a step: a pending row's id
    /// conflicts, an id the filter leaves out is free, and an automatic id follows the finished
    /// table's largest (the redirect insert trigger and its probe, `InsertProbe`).
    @Test func insertsConflictAndNumberAsTheFinishedTableAfterAStep() throws {
        let fixture = try Fixture(rows: 4000)
        try fixture.writePlan()  // messages where conversation_id < 10 (id % 20 < 10): 2,000 rows, the largest 4000
        let result = try fixture.ferry("shell", "--plan", "plan.json", "--json", input: """
            .step
            INSERT INTO messages(conversation_id, body) VALUES (1, 'automatic') RETURNING id;
            INSERT INTO messages(id, conversation_id, body) VALUES (3989, 1, 'taken');
            INSERT INTO messages(id, conversation_id, body) VALUES (3995, 1, 'free');
            .step all
            SELECT count(*) FROM messages;
            SELECT body FROM messages WHERE id IN (3989, 3995, 4001) ORDER BY id;
            """)
        #expect(result.status == 1, "\(result)")  // the conflicting insert failed
        let lines = try objects(result)
        try #require(lines.count == 7, "\(result.stdout)")
        #expect((lines[1]["rows"] as? [[Int]]) == [[4001]], "\(result.stdout)")
        let message = (lines[2]["error"] as? [String: Any])?["message"] as? String
        #expect(message?.contains("UNIQUE constraint failed: messages.id") == true, "\(result.stdout)")
        #expect(lines[3]["changes"] as? Int == 1, "\(result.stdout)")
        #expect((lines[5]["rows"] as? [[Int]]) == [[2002]], "\(result.stdout)")
        #expect((lines[6]["rows"] as? [[String]]) == [["message 3989"], ["free"], ["automatic"]], "\(result.stdout)")
    }

    @Test func worksOnADatabaseWithoutPlanAndInTextMode() throws {
        let fixture = try Fixture(rows: 3)
        let result = try fixture.ferry("shell", "legacy.db", input: "SELECT id, body FROM messages ORDER BY id;\n.bogus\n")
        #expect(result.status == 1, "\(result)")  // the unknown command
        #expect(result.stdout.contains("id | body"), "\(result)")
        #expect(result.stdout.contains("3 | message 3"), "\(result)")
        #expect(result.stdout.contains("error: unknown command .bogus"), "\(result)")
    }

    /// A failed statement used to leave the shell's exit status 0. The shell still runs every
    /// statement after it (their changes stay), then exits 1 with one line on standard error.
    @Test func aFailedStatementMakesTheShellExitNonZeroAfterRunningTheRest() throws {
        let fixture = try Fixture(rows: 40)
        try fixture.writePlan()
        let input = """
            CREATE TABLE IF NOT EXISTS notes(x);
            SELECT nosuch FROM notes;
            INSERT INTO notes VALUES (1);
            .step
            """
        for arguments in [["shell", "--plan", "plan.json"], ["shell", "--plan", "plan.json", "--json"]] {
            let result = try CLI.run(arguments, in: fixture.directory, input: input)
            expectOneLineError(result, containing: "1 statement(s) or command(s) failed")
            #expect(result.status == 1, "\(result)")
            #expect(result.stdout.contains("no such column: nosuch"), "\(result)")
            #expect(result.stdout.contains("1 batch(es)") || result.stdout.contains("\"batches\":1"), "\(result)")
        }
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM notes") == 2)  // both runs inserted
        // Without a failure, 0.
        let clean = try fixture.ferry("shell", "--plan", "plan.json", input: "SELECT count(*) FROM notes;\n.status\n")
        #expect(clean.status == 0 && clean.stderr.isEmpty, "\(clean)")
    }

    @Test func refusedStatementsChangeNothing() throws {
        let fixture = try Fixture(rows: 40)
        try fixture.writePlan()
        let result = try fixture.ferry("shell", "--plan", "plan.json", "--json", input: "CREATE TEMP VIEW recent AS SELECT * FROM messages;\nSELECT count(*) FROM messages;\n")
        let lines = try objects(result)
        try #require(lines.count == 2, "\(result)")
        #expect(lines[0]["ok"] as? Bool == false)
        let message = (lines[0]["error"] as? [String: Any])?["message"] as? String
        #expect(message?.contains("messages") == true, "\(result)")
        #expect((lines[1]["rows"] as? [[Int]]) == [[20]])
    }

    /// The legacy file's other tables (no mapping moves them) are not the app's: an unqualified
    /// name main lacks is "no such table", as on the finished database, until the app creates it.
    @Test func aSourceFilesOtherTablesAreNoSuchTableUntilTheAppCreatesThem() throws {
        let fixture = try Fixture(rows: 40)
        try fixture.writePlan()
        let legacy = try Connection(path: fixture.path("legacy.db"))
        try legacy.execute("CREATE TABLE settings(k TEXT, v TEXT); INSERT INTO settings VALUES ('theme', 'dark')")
        legacy.close()
        let result = try fixture.ferry("shell", "--plan", "plan.json", "--json", input: """
            SELECT count(*) FROM settings;
            .step
            SELECT v FROM settings;
            CREATE TABLE settings(k TEXT, v TEXT);
            INSERT INTO settings VALUES ('theme', 'light');
            SELECT v FROM settings;
            """)
        let lines = try objects(result)
        try #require(lines.count == 6, "\(result)")
        for line in [lines[0], lines[2]] {
            #expect(line["ok"] as? Bool == false, "\(result)")
            let error = line["error"] as? [String: Any]
            #expect(error?["code"] as? Int == 1, "\(result)")
            #expect((error?["message"] as? String)?.hasSuffix("no such table: main.settings") == true, "\(result)")
        }
        #expect((lines[5]["rows"] as? [[String]]) == [["light"]], "\(result)")
        #expect(try fixture.withConnection("legacy.db") { try $0.scalar("SELECT v FROM settings", as: String.self) } == "dark")
    }
}
#endif
