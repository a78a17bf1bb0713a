#if CommandLineTool
import Foundation
import Testing
import Ferry

/// Schema statements on a migrating table through `ferry shell`: an index and a unique index
/// (refused over a duplicate among pending rows, as on the finished table), the describing pragmas,
/// `rowid, *`, an index hint and an added column; then the migration runs to its end and keeps them.
@Suite(.timeLimit(.minutes(2)))
struct SchemaStatementCommandTests {
    @Test func indexesAndPragmasOnAMigratingTable() throws {
        let fixture = try Fixture(rows: 60)
        try fixture.writePlan()  // messages where conversation_id < 10: 30 rows
        let shell = try fixture.ferry("shell", "--plan", "plan.json", input: """
            .step
            CREATE UNIQUE INDEX messages_conversation ON messages(conversation_id);
            CREATE UNIQUE INDEX messages_body ON messages(body);
            CREATE INDEX messages_by_conversation ON messages(conversation_id);
            PRAGMA index_list(messages);
            PRAGMA table_info(messages);
            INSERT INTO messages(conversation_id, body) VALUES (1, 'message 59');
            SELECT rowid, * FROM messages WHERE id = 3;
            SELECT count(*) AS hinted FROM messages INDEXED BY messages_by_conversation WHERE conversation_id = 1;
            ALTER TABLE messages ADD COLUMN starred INTEGER DEFAULT 0;
            SELECT count(*) AS unstarred FROM messages WHERE starred = 0;
            ALTER TABLE messages RENAME COLUMN body TO text;
            SELECT text AS renamed FROM messages WHERE id = 9;

            """)
        #expect(shell.status == 1, "\(shell)")  // the first unique index failed
        // conversation_id repeats among the 30 rows (ids 1 and 21 are both conversation 1).
        #expect(shell.stdout.contains("UNIQUE constraint failed: messages.conversation_id"), "\(shell)")
        #expect(shell.stdout.contains("messages_body") && shell.stdout.contains("messages_by_conversation"), "\(shell)")
        #expect(shell.stdout.contains("body") && shell.stdout.contains("TEXT"), "\(shell)")
        // `rowid, *` shows the finished table's columns after the rowid (row 3 is still pending);
        // the hint applies to the target's index: 3 rows of conversation 1 (ids 1, 21, 41).
        #expect(shell.stdout.contains("message 3"), "\(shell)")
        #expect(!shell.stdout.contains("error: cannot run"), "\(shell)")
        #expect(shell.stdout.contains("hinted"), "\(shell)")
        // The added column reads its default on every row, moved or pending: 30 migrating rows and the insert.
        #expect(shell.stdout.contains("unstarred\n31"), "\(shell)")
        // Row 9 (from the legacy file) reads its body under the new name.
        #expect(shell.stdout.contains("renamed\nmessage 9"), "\(shell)")
        // Row 59 (conversation 19) is not migrated: its body is free in the target table.
        #expect(!shell.stdout.contains("UNIQUE constraint failed: messages.body"), "\(shell)")
        let run = try CLI.run(["run", "--plan", "plan.json"], in: fixture.directory)
        #expect(run.status == 0, "\(run)")
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM messages") == 31)
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('messages_body', 'messages_by_conversation')") == 2)
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM messages WHERE text LIKE 'message %'") == 31)  // with the shell's insert
        let verify = try CLI.run(["verify", "app.db"], in: fixture.directory)
        #expect(verify.status == 0, "\(verify)")
    }

    /// A trigger created in `ferry shell` while the table migrates fires for the shell's inserts,
    /// never for the rows `.step` and `ferry run` move; once finished it reads as written.
    @Test func anInsertTriggerCreatedInTheShellIgnoresFerrysMoves() throws {
        let fixture = try Fixture(rows: 60)
        try fixture.writePlan()  // messages where conversation_id < 10: 30 rows
        let trigger = "CREATE TRIGGER messages_log AFTER INSERT ON messages BEGIN INSERT INTO inserted VALUES (NEW.id); END"
        let shell = try fixture.ferry("shell", "--plan", "plan.json", input: """
            CREATE TABLE inserted(id INTEGER);
            \(trigger);
            .step
            INSERT INTO messages(conversation_id, body) VALUES (1, 'new');
            UPDATE messages SET body = 'edited' WHERE conversation_id = 3;
            SELECT count(*) AS logged FROM inserted;

            """)
        #expect(shell.status == 0, "\(shell)")
        #expect(shell.stdout.contains("logged\n1"), "\(shell)")
        let run = try CLI.run(["run", "--plan", "plan.json"], in: fixture.directory)
        #expect(run.status == 0, "\(run)")
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM inserted") == 1)
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM messages") == 31)
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM sqlite_master WHERE sql = '\(trigger.replacingOccurrences(of: "'", with: "''"))'") == 1)
    }

    /// A table renamed in `ferry shell` while it migrates: `ferry run` with the unchanged plan
    /// (which still says `messages`) finishes it under its new name, and never recreates the old one.
    @Test func aTableRenamedInTheShellFinishesUnderItsNewName() throws {
        let fixture = try Fixture(rows: 60)
        try fixture.writePlan()  // messages where conversation_id < 10: 30 rows
        let shell = try fixture.ferry("shell", "--plan", "plan.json", input: """
            .step
            ALTER TABLE messages RENAME TO letters;
            ALTER TABLE letters DROP COLUMN conversation_id;
            SELECT count(*) AS renamed FROM letters;

            """)
        #expect(shell.status == 0, "\(shell)")
        #expect(shell.stdout.contains("renamed\n30"), "\(shell)")
        let run = try CLI.run(["run", "--plan", "plan.json"], in: fixture.directory)
        #expect(run.status == 0, "\(run)")
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM letters WHERE body LIKE 'message %'") == 30)
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM sqlite_master WHERE name = 'messages'") == 0)
        let verify = try CLI.run(["verify", "app.db"], in: fixture.directory)
        #expect(verify.status == 0, "\(verify)")
    }

    /// A source `WITHOUT ROWID` through the CLI: `ferry shell` reads and writes the migrating table
    /// (a copy without rowid), `ferry run` finishes and cleans the source, `ferry verify` agrees.
    @Test func aSourceWithoutRowidMigratesThroughTheCLI() throws {
        let fixture = try Fixture(rows: 60)
        try fixture.withConnection("legacy.db") { db in
            try db.execute("CREATE TABLE keyed(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, body TEXT) WITHOUT ROWID")
            try db.execute("INSERT INTO keyed SELECT * FROM messages")
        }
        try fixture.writePlan(sourceTable: "keyed")  // conversation_id < 10: 30 rows
        let shell = try fixture.ferry("shell", "--plan", "plan.json", input: """
            .step
            SELECT count(*) AS visible FROM messages;
            INSERT INTO messages(id, conversation_id, body) VALUES (45, 5, 'again');
            UPDATE messages SET body = 'edited' WHERE id = 47;
            DELETE FROM messages WHERE id = 49 RETURNING id AS gone;
            SELECT body AS edited FROM messages WHERE id = 47;

            """)
        #expect(shell.status == 1, "\(shell)")  // the insert failed
        #expect(shell.stdout.contains("visible\n30"), "\(shell)")
        #expect(shell.stdout.contains("UNIQUE constraint failed: messages.id"), "\(shell)")  // row 45 is pending
        #expect(shell.stdout.contains("gone\n49"), "\(shell)")
        #expect(shell.stdout.contains("edited\nedited"), "\(shell)")
        let run = try CLI.run(["run", "--plan", "plan.json"], in: fixture.directory)
        #expect(run.status == 0, "\(run)")
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM messages") == 29)
        #expect(try fixture.scalar("app.db", "SELECT count(*) FROM messages WHERE body = 'edited'") == 1)
        #expect(try fixture.scalar("legacy.db", "SELECT count(*) FROM keyed") == 30)  // the filter's other half stays
        let verify = try CLI.run(["verify", "app.db"], in: fixture.directory)
        #expect(verify.status == 0, "\(verify)")
    }
}
#endif
