#if CommandLineTool
import FerrySQLite
import Foundation
import Testing
import Ferry

/// `ferry plan apply`, `status`, `run`, `step` and `verify` on small databases.
@Suite(.timeLimit(.minutes(2)))
struct CommandTests {
    @Test func planApplyRegistersAndIsIdempotent() throws {
        let fixture = try Fixture()
        try fixture.writePlan()
        let first = try fixture.ferry("plan", "apply", "plan.json")
        #expect(first.status == 0, "\(first)")
        #expect(first.stdout.contains("registered messages <- "), "\(first)")
        #expect(first.stdout.contains("300 left"), "\(first)")
        #expect(first.stderr.isEmpty)
        let afterFirst = try fixture.dump("app.db")
        #expect(afterFirst.contains("ferry_migration_tables"))

        let second = try fixture.ferry("plan", "apply", "plan.json")
        #expect(second.status == 0, "\(second)")
        #expect(second.stdout.contains("already registered messages"), "\(second)")
        #expect(second.stdout.contains("nothing changed"), "\(second)")
        #expect(try fixture.dump("app.db") == afterFirst)
    }

    @Test func conflictingPlanIsRefused() throws {
        let fixture = try Fixture()
        try fixture.writePlan()
        #expect(try fixture.ferry("plan", "apply", "plan.json").status == 0)
        let before = try fixture.dump("app.db")
        try fixture.writePlan("other.json", filter: "conversation_id < 5")
        let result = try fixture.ferry("plan", "apply", "other.json")
        expectOneLineError(result, containing: "already fed by messages")
        #expect(try fixture.dump("app.db") == before)
    }

    @Test func statusAsTextAndJSON() throws {
        let fixture = try Fixture()
        try fixture.writePlan()
        #expect(try fixture.ferry("plan", "apply", "plan.json").status == 0)

        let text = try fixture.ferry("status", "app.db")
        #expect(text.status == 0, "\(text)")
        #expect(text.stdout.contains("messages <- \(fixture.path("legacy.db")):messages where conversation_id < 10"), "\(text)")
        #expect(text.stdout.contains("pending: 0 moved, 300 left"), "\(text)")
        #expect(text.stdout.contains("ETA"), "\(text)")

        let json = try fixture.ferry("status", "app.db", "--json")
        #expect(json.status == 0, "\(json)")
        let document = try parseJSONObject(json.stdout)
        #expect(document["finished"] as? Bool == false)
        #expect((document["rowsLeft"] as? NSNumber)?.intValue == 300)
        let tables = try #require(document["tables"] as? [[String: Any]])
        #expect(tables.count == 1)
        #expect(tables[0]["target"] as? String == "messages")
        #expect(tables[0]["source"] as? String == "messages")
        #expect(tables[0]["sourcePath"] as? String == fixture.path("legacy.db"))
        #expect(tables[0]["filter"] as? String == "conversation_id < 10")
        #expect(tables[0]["state"] as? String == "pending")
        #expect((tables[0]["rowsMoved"] as? NSNumber)?.intValue == 0)
        #expect(tables[0]["etaSeconds"] is NSNull)

        // --plan in place of DB.
        let viaPlan = try fixture.ferry("status", "--plan", "plan.json", "--json")
        #expect(viaPlan.status == 0, "\(viaPlan)")
        #expect((try parseJSONObject(viaPlan.stdout)["rowsLeft"] as? NSNumber)?.intValue == 300)
    }

    /// `status --count` counts rows left exactly; plan files carry column feeds.
    @Test func statusCountAndColumnFeeds() throws {
        let fixture = try Fixture()
        try fixture.write("feeds.json", """
            { "target": { "path": "app.db" },
              "sources": [ { "path": "legacy.db",
                  "tables": [ { "source": "messages", "filter": "conversation_id < 10",
                                "columns": [ { "column": "body", "from": "upper(body)" } ] } ] } ] }
            """)
        #expect(try fixture.ferry("plan", "apply", "feeds.json").status == 0)
        let estimated = try fixture.ferry("status", "app.db")
        #expect(estimated.stdout.contains("300 left (estimated)"), "\(estimated)")
        let counted = try parseJSONObject(try fixture.ferry("status", "app.db", "--count", "--json").stdout)
        #expect(counted["rowsLeftExact"] as? Bool == true)
        #expect((counted["rowsLeft"] as? NSNumber)?.intValue == 300)
        #expect(try fixture.ferry("run", "app.db", "--drain").status == 0)
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM messages WHERE body = upper(body) AND body LIKE 'MESSAGE %'") == 300)

        try fixture.write("bad.json", """
            { "target": { "path": "app.db" }, "sources": [ { "path": "legacy.db",
                  "tables": [ { "source": "messages", "target": "other", "columns": [ { "column": "body", "expression": "1" } ] } ] } ] }
            """)
        expectOneLineError(try fixture.ferry("plan", "apply", "bad.json"), containing: "unknown field \"expression\"")
    }

    @Test func statusWithoutPlan() throws {
        let fixture = try Fixture()
        let result = try fixture.ferry("status", "legacy.db", "--json")
        #expect(result.status == 0, "\(result)")
        let document = try parseJSONObject(result.stdout)
        #expect(document["registered"] as? Bool == false)
        #expect((document["tables"] as? [Any])?.isEmpty == true)
    }

    @Test func runMigratesToCompletionAndCleansTheSource() throws {
        let fixture = try Fixture()
        try fixture.writePlan()
        #expect(try fixture.ferry("plan", "apply", "plan.json").status == 0)
        let run = try fixture.ferry("run", "app.db", "--drain")
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("messages: 300 moved, finished"), "\(run)")
        #expect(run.stdout.contains("done: 300 row(s) moved, 300 source row(s) cleaned"), "\(run)")
        #expect(!run.stdout.contains("\r"), "a pipe gets plain lines")

        let status = try parseJSONObject(try fixture.ferry("status", "app.db", "--json").stdout)
        #expect(status["finished"] as? Bool == true)
        #expect((status["rowsMoved"] as? NSNumber)?.intValue == 300)
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM messages") == 300)
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM messages WHERE conversation_id >= 10") == 0)
        #expect(try fixture.scalar("legacy.db", "SELECT count(*) FROM messages") == 300)
        #expect(try fixture.scalar("legacy.db", "SELECT count(*) FROM messages WHERE conversation_id < 10") == 0)

        // The source is cleaned: verification is limited to integrity and counts.
        let verify = try fixture.ferry("verify", "app.db")
        #expect(verify.status == 0, "\(verify)")
        #expect(verify.stdout.contains("integrity check: ok"), "\(verify)")
        #expect(verify.stdout.contains("verification limited to the target's integrity and counts"), "\(verify)")

        // Running again has nothing to do.
        let again = try fixture.ferry("run", "app.db")
        #expect(again.status == 0, "\(again)")
        #expect(again.stdout.contains("done: 0 row(s) moved"), "\(again)")
    }

    @Test func runWithPlanFileAndBudget() throws {
        let fixture = try Fixture()
        try fixture.writePlan()
        let run = try fixture.ferry("run", "--plan", "plan.json", "--budget-ms", "5", "--interval-ms", "0")
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("done: 300 row(s) moved"), "\(run)")
    }

    /// A plan file's source in rollback-journal mode goes to WAL when `plan apply` registers it,
    /// unless the file says `"keepJournalMode": true`; `run` moves the same rows either way.
    @Test(arguments: [false, true]) func planApplySwitchesARollbackJournalSourceToWALUnlessKept(keep: Bool) throws {
        let fixture = try Fixture(legacyJournal: .delete)
        try fixture.writePlan(extraSourceField: keep ? #", "keepJournalMode": true"# : "")
        #expect(try fixture.journalMode(of: "legacy.db") == "delete")
        let apply = try fixture.ferry("plan", "apply", "plan.json")
        #expect(apply.status == 0, "\(apply)")
        #expect(try fixture.journalMode(of: "legacy.db") == (keep ? "delete" : "wal"))
        let run = try fixture.ferry("run", "--plan", "plan.json", "--budget-ms", "5", "--interval-ms", "0")
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("done: 300 row(s) moved"), "\(run)")
    }

    @Test func stepRunsTheGivenNumberOfBatches() throws {
        let fixture = try Fixture()
        try fixture.writePlan()
        #expect(try fixture.ferry("plan", "apply", "plan.json").status == 0)
        let result = try fixture.ferry("step", "app.db", "--count", "2")
        #expect(result.status == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(result)")
        #expect(lines[0].hasPrefix("step 1: move messages: 300 row(s) moved, 0 left, "), "\(result)")
        #expect(lines[0].hasSuffix(" ms"), "\(result)")
        #expect(lines[1].hasPrefix("step 2: move messages: table finished"), "\(result)")

        let more = try fixture.ferry("step", "app.db", "--count", "5")
        #expect(more.status == 0, "\(more)")
        #expect(more.stdout.contains("step 1: cleanup messages: 300 source row(s) deleted"), "\(more)")
        #expect(more.stdout.contains("nothing left to do"), "\(more)")
    }

    @Test func verifyPassesMidMigrationAndDetectsATamperedRow() throws {
        let fixture = try Fixture(rows: 2000)
        try fixture.writePlan()
        #expect(try fixture.ferry("plan", "apply", "plan.json").status == 0)
        let step = try fixture.ferry("step", "app.db")
        #expect(step.status == 0, "\(step)")
        #expect(step.stdout.contains("512 row(s) moved, 488 left"), "\(step)")

        let ok = try fixture.ferry("verify", "app.db")
        #expect(ok.status == 0, "\(ok)")
        #expect(ok.stdout.contains("(migrating): 512 moved row(s) compared, OK"), "\(ok)")
        #expect(ok.stdout.contains("verification passed"), "\(ok)")

        // The app's own edits (through Ferry: `ferry shell`) are no difference.
        let edit = try fixture.ferry("shell", "--plan", "plan.json", input: "UPDATE messages SET body = 'edited' WHERE id IN (2, 4, 6);\n")
        #expect(edit.status == 0, "\(edit)")
        let edited = try fixture.ferry("verify", "app.db")
        #expect(edited.status == 0, "\(edited)")
        #expect(edited.stdout.contains("3 edited by the app since they moved (not compared)"), "\(edited)")

        // Tamper with a moved row directly in the target.
        let rowid = try fixture.withConnection("app.db") { db -> Int64 in
            let rowid = try #require(try db.scalar("SELECT id FROM messages ORDER BY id LIMIT 1 OFFSET 100", as: Int64.self))
            try db.execute("UPDATE messages SET body = 'tampered' WHERE id = ?", [.integer(rowid)])
            return rowid
        }
        let bad = try fixture.ferry("verify", "app.db")
        expectOneLineError(bad, containing: "verification failed: 1 row(s) missing, differing or unaccounted for in messages")
        #expect(bad.stdout.contains("0 missing, 1 differing (source rowids \(rowid))"), "\(bad)")
    }

    /// A page of moved rows in the *source* goes bad: the one-line error names the source file,
    /// not the target the command was given.
    @Test func verifyNamesACorruptSource() throws {
        let fixture = try Fixture(rows: 2000)
        let marker = "marker-of-row-300-" + String(repeating: "x", count: 40)
        try fixture.withConnection("legacy.db") { db in try db.execute("UPDATE messages SET body = ? WHERE id = 300", [.text(marker)]) }
        try fixture.writePlan()
        #expect(try fixture.ferry("plan", "apply", "plan.json").status == 0)
        #expect(try fixture.ferry("step", "app.db").status == 0)
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture.path("legacy.db")))
        let offset = try #require(data.range(of: Data(marker.utf8))?.lowerBound)
        let handle = try #require(FileHandle(forUpdatingAtPath: fixture.path("legacy.db")))
        try handle.seek(toOffset: UInt64(offset / 4096 * 4096))
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 12))
        try handle.close()
        let bad = try fixture.ferry("verify", "app.db")
        expectOneLineError(bad, containing: "legacy.db")
        #expect(bad.stderr.contains("corrupt") && !bad.stderr.contains("app.db: SQLite error"), "\(bad)")
    }

    @Test func verifyDetectsAMissingRowOfAFinishedTable() throws {
        let fixture = try Fixture()
        try fixture.writePlan()
        #expect(try fixture.ferry("plan", "apply", "plan.json").status == 0)
        #expect(try fixture.ferry("step", "app.db", "--count", "2").status == 0)  // moved and finished, not cleaned
        let ok = try fixture.ferry("verify", "app.db")
        #expect(ok.status == 0, "\(ok)")
        #expect(ok.stdout.contains("(finished): 300 moved row(s) compared, OK"), "\(ok)")

        try fixture.withConnection("app.db") { db in try db.execute("DELETE FROM messages WHERE id = 42") }
        let bad = try fixture.ferry("verify", "app.db")
        expectOneLineError(bad, containing: "verification failed")
        #expect(bad.stdout.contains("1 missing, 0 differing (source rowids 42)"), "\(bad)")
    }

    @Test func sameFileSourceWithNullPath() throws {
        let fixture = try Fixture()
        try fixture.withConnection("app.db") { db in
            try db.execute("CREATE TABLE old_messages(id INTEGER PRIMARY KEY, body TEXT)")
            try db.execute("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 250) INSERT INTO old_messages SELECT x, 'old ' || x FROM n")
        }
        try fixture.write("same.json", """
            { "target": { "path": "app.db" },
              "sources": [ { "path": null, "tables": [ { "source": "old_messages", "target": "messages" } ] } ] }
            """)
        let run = try fixture.ferry("run", "--plan", "same.json", "--drain")
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("done: 250 row(s) moved"), "\(run)")
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM messages") == 250)
        let status = try fixture.ferry("status", "app.db")
        #expect(status.stdout.contains("messages <- old_messages"), "\(status)")
    }

    @Test func interruptedRunResumes() throws {
        let fixture = try Fixture(rows: 40_000)
        try fixture.writePlan()
        #expect(try fixture.ferry("plan", "apply", "plan.json").status == 0)
        let interrupted = try CLI.runInterrupting(["run", "app.db", "--budget-ms", "1", "--interval-ms", "2"],
                                                  in: fixture.directory, when: "moved")
        // Usually interrupted mid-way (130); a fast machine may have finished first.
        #expect(interrupted.status == 130 || interrupted.status == 0, "\(interrupted)")
        if interrupted.status == 130 {
            #expect(interrupted.stderrLines.count == 1, "\(interrupted)")
            #expect(interrupted.stderr.hasPrefix("interrupted: "), "\(interrupted)")
            let verify = try fixture.ferry("verify", "app.db")
            #expect(verify.status == 0, "\(verify)")
        }
        let resumed = try fixture.ferry("run", "app.db", "--drain")
        #expect(resumed.status == 0, "\(resumed)")
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM messages") == 20_000)
        let status = try parseJSONObject(try fixture.ferry("status", "app.db", "--json").stdout)
        #expect(status["finished"] as? Bool == true)
    }

    @Test(.enabled(if: SQLiteEngine.supportsEncryption))
    func encryptedDatabasesWithSQLCipher3SourceAndKeyFromEnvironment() throws {
        let legacyCipher = Cipher.passphrase("legacy-secret", settings: .sqlcipher3)
        let fixture = try Fixture(rows: 200, legacyCipher: legacyCipher)
        try fixture.write("enc.json", """
            { "target": { "path": "app.db", "key": "app-secret", "cipher": { "compatibility": 4 } },
              "sources": [ { "path": "legacy.db", "keyEnv": "FERRY_TEST_LEGACY_KEY",
                  "cipher": { "compatibility": 3, "pageSize": 1024, "kdfIterations": 64000 },
                  "tables": [ { "source": "messages", "filter": "conversation_id < 10" } ] } ] }
            """)
        let env = ["FERRY_TEST_LEGACY_KEY": "legacy-secret"]
        let apply = try fixture.ferry("plan", "apply", "enc.json", environment: env)
        #expect(apply.status == 0, "\(apply)")
        let step = try fixture.ferry("step", "--plan", "enc.json", environment: env)
        #expect(step.status == 0, "\(step)")
        let verify = try fixture.ferry("verify", "--plan", "enc.json", environment: env)
        #expect(verify.status == 0, "\(verify)")
        #expect(verify.stdout.contains("100 moved row(s) compared, OK"), "\(verify)")
        let run = try fixture.ferry("run", "--plan", "enc.json", "--drain", environment: env)
        #expect(run.status == 0, "\(run)")
        // The target opens with its key alone once the source is no longer needed.
        let status = try fixture.ferry("status", "app.db", "--key", "app-secret", "--json")
        #expect(status.status == 0, "\(status)")
        #expect(try parseJSONObject(status.stdout)["finished"] as? Bool == true)
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM messages", cipher: .passphrase("app-secret")) == 100)

        // The key variable missing: a clear error.
        let missing = try fixture.ferry("status", "--plan", "enc.json")
        expectOneLineError(missing, containing: "environment variable FERRY_TEST_LEGACY_KEY is not set")
    }
}
#endif
