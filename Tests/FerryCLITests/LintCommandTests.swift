#if CommandLineTool
import Foundation
import Testing
import Ferry

/// `ferry lint`.
@Suite(.timeLimit(.minutes(2)))
struct LintCommandTests {
    @Test func refusesDroppingATableWithUserData() throws {
        let fixture = try Fixture()
        try fixture.write("002_drop.sql", "DROP TABLE messages;\n")
        let result = try fixture.ferry("lint", "002_drop.sql")
        expectOneLineError(result, containing: "the lint refused statements")
        #expect(result.status == 1)
        #expect(result.stdout.contains("002_drop.sql: [drop-table-with-rows] refused"), "\(result)")

        // Against the live database too.
        let live = try fixture.ferry("lint", "--database", "legacy.db", "002_drop.sql")
        #expect(live.status == 1, "\(live)")
        #expect(live.stdout.contains("[drop-table-with-rows]"), "\(live)")

        // Allowed with a reason.
        let allowed = try fixture.ferry("lint", "--allow", "drop-table-with-rows=archived elsewhere", "002_drop.sql")
        #expect(allowed.status == 0, "\(allowed)")
        #expect(allowed.stdout.contains("allowed because: archived elsewhere"), "\(allowed)")
    }

    @Test func cleanMigrationPasses() throws {
        let fixture = try Fixture()
        try fixture.write("001_clean.sql", """
            CREATE TABLE tags(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            ALTER TABLE messages ADD COLUMN tag_id INTEGER REFERENCES tags(id);
            CREATE INDEX messages_by_tag ON messages(tag_id);
            """)
        let result = try fixture.ferry("lint", "001_clean.sql")
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        #expect(result.stdout.contains("1 file(s), 0 finding(s), 0 refused"), "\(result)")
    }

    @Test func directoryIsLintedInOrder() throws {
        let fixture = try Fixture()
        try FileManager.default.createDirectory(atPath: fixture.path("migrations"), withIntermediateDirectories: true)
        try fixture.write("migrations/10_drop_column.sql", "ALTER TABLE messages DROP COLUMN body;")
        try fixture.write("migrations/2_rename.sql", "ALTER TABLE messages RENAME TO notes;")
        try fixture.write("migrations/1_create.sql", "CREATE TABLE tags(id INTEGER PRIMARY KEY);")
        try fixture.write("migrations/README.md", "not SQL")
        let result = try fixture.ferry("lint", "migrations")
        #expect(result.status == 1, "\(result)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let rename = try #require(lines.firstIndex { $0.contains("[rename] warning") })
        let drop = try #require(lines.firstIndex { $0.contains("[drop-column] refused") })
        #expect(rename < drop, "numeric name order: 2 before 10")
        #expect(result.stdout.contains("3 file(s), 2 finding(s), 1 refused"), "\(result)")

        // Warnings alone pass, unless --strict.
        try FileManager.default.removeItem(atPath: fixture.path("migrations/10_drop_column.sql"))
        #expect(try fixture.ferry("lint", "migrations").status == 0)
        expectOneLineError(try fixture.ferry("lint", "--strict", "migrations"), containing: "1 warning(s)")
    }

    /// A NUL byte, or bytes that are not UTF-8, used to hide the statements of the file: 0
    /// findings and exit 0. Now the file is an input error (exit 2) naming the byte offset.
    @Test func unreadableBytesAreAnInputError() throws {
        let fixture = try Fixture()
        let drops = Data("DROP TABLE messages;\nDROP TABLE x".utf8)  // 33 bytes
        for (bytes, offset) in [(drops + [0] + Data(";\n".utf8), 33), (Data([0xFF]) + drops, 0), (drops + [0xC3, 0x28], 33)] {
            try bytes.write(to: URL(fileURLWithPath: fixture.path("bad.sql")))
            let result = try fixture.ferry("lint", "bad.sql")
            expectOneLineError(result, containing: "byte offset \(offset)")
            #expect(result.status == 2, "\(result)")
            #expect(result.stderr.contains("bad.sql"), "\(result)")
            #expect(!result.stdout.contains("0 finding(s)"), "\(result)")
        }
        // In a directory too, after a readable file.
        try FileManager.default.createDirectory(atPath: fixture.path("migrations"), withIntermediateDirectories: true)
        try fixture.write("migrations/1_create.sql", "CREATE TABLE tags(id INTEGER PRIMARY KEY);")
        try (drops + [0]).write(to: URL(fileURLWithPath: fixture.path("migrations/2_drop.sql")))
        let directory = try fixture.ferry("lint", "migrations")
        expectOneLineError(directory, containing: "2_drop.sql")
        #expect(directory.status == 2, "\(directory)")
    }

    @Test func badOptionIsOneLineError() throws {
        let fixture = try Fixture()
        try fixture.write("a.sql", "SELECT 1;")
        expectOneLineError(try fixture.ferry("lint", "--allow", "no-such-rule=x", "a.sql"), containing: "--allow needs RULE=REASON")
        expectOneLineError(try fixture.ferry("lint", "--database", "nope.db", "a.sql"), containing: "no such database: nope.db")
    }
}
#endif
