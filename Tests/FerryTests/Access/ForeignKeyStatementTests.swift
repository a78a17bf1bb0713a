import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// The app's writes under enforced foreign keys while related tables migrate, against the finished
/// tables (an oracle holding every row): a child of a pending parent is accepted (the parent moves
/// ahead), deleting a parent reaches its pending children (`ON DELETE CASCADE`, through two levels),
/// a `NO ACTION` key still refuses, and a missing parent still fails. Every placement, with steps
/// in between.
@Suite(.timeLimit(.minutes(2)))
struct ForeignKeyStatementTests {
    typealias Placement = SchemaStatementTests.Placement

    static let mappedSchema = """
        CREATE TABLE conversations(id INTEGER PRIMARY KEY, title TEXT);
        CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER REFERENCES conversations(id) ON DELETE CASCADE ON UPDATE CASCADE, body TEXT);
        """
    /// The app's own tables in the target: attachments cascade from messages; pins refuse.
    static let appSchema = """
        CREATE TABLE attachments(id INTEGER PRIMARY KEY, message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE);
        CREATE TABLE pins(message_id INTEGER REFERENCES messages(id));
        """

    struct Setup {
        let box = Sandbox()
        let oracle: Connection
        let db: FerryDatabase

        /// - Parameter orphan: the legacy data (and the oracle) hold message 61 of a conversation
        ///   that does not exist.
        init(placement: Placement, orphan: Bool = false) throws {
            let cipher: Cipher? = placement == .encrypted ? .passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
            let appPath = box.path("app.db")
            let sameFile = placement == .sameFile
            let legacy = try Connection(path: sameFile ? appPath : box.path("legacy.db"), configuration: .init(cipher: cipher))
            let prefix = sameFile ? "legacy_" : ""
            let rows = """
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 12) INSERT INTO {p}conversations SELECT x, 'c' || x FROM n;
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 60) INSERT INTO {p}messages SELECT x, 13 - (x % 12 + 1), 'm' || x FROM n;
                """
            try legacy.execute(Self.schema(prefix: prefix) + rows.replacingOccurrences(of: "{p}", with: prefix))
            let orphanRow = "PRAGMA foreign_keys = OFF; INSERT INTO {p}messages VALUES (61, 99, 'orphan'); PRAGMA foreign_keys = ON;"
            if orphan { try legacy.execute(orphanRow.replacingOccurrences(of: "{p}", with: prefix)) }
            oracle = try Connection(path: box.path("oracle.db"))
            try oracle.execute(ForeignKeyStatementTests.mappedSchema + ForeignKeyStatementTests.appSchema + rows.replacingOccurrences(of: "{p}", with: ""))
            if orphan { try oracle.execute(orphanRow.replacingOccurrences(of: "{p}", with: "")) }
            legacy.close()
            let app = try Connection(path: appPath, configuration: .init(cipher: cipher))
            try app.execute(ForeignKeyStatementTests.mappedSchema + ForeignKeyStatementTests.appSchema)
            app.close()
            let location: MigrationSourceLocation = sameFile ? .targetFile : .file(box.path("legacy.db"))
            // Messages first: the stepper moves children while their parents are pending.
            let plan = MigrationPlan(sources: [MigrationSource(location, cipher: cipher, tables: [
                TableMapping(target: "messages", source: prefix + "messages"), TableMapping(target: "conversations", source: prefix + "conversations"),
            ])])
            db = try FerryDatabase(path: appPath, configuration: .init(cipher: cipher), plan: plan, options: .fixedBatches(of: 5))
        }

        static func schema(prefix: String) -> String {
            """
            CREATE TABLE \(prefix)conversations(id INTEGER PRIMARY KEY, title TEXT);
            CREATE TABLE \(prefix)messages(id INTEGER PRIMARY KEY, conversation_id INTEGER REFERENCES \(prefix)conversations(id), body TEXT);
            """
        }

        /// Runs `sql` on both; expects the same outcome (rows or the error's code and message) and
        /// the same rows in every table.
        func same(_ sql: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let finished: String
            do { finished = "\(try oracle.fetchAll(sql).map(\.values))" } catch { finished = "error \(FerryError(error).resultCode?.primary as Any)" }
            let ferry: String
            do {
                ferry = "\(try db.write { db throws(FerryError) in try db.fetchAll(sql).map(\.values) })"
            } catch {
                ferry = "error \(error.resultCode?.primary as Any)"
            }
            #expect(ferry == finished, "\(sql)", sourceLocation: sourceLocation)
            for table in ["conversations", "messages", "attachments", "pins"] {
                let query = "SELECT * FROM \(table) ORDER BY 1, 2"
                let expected = try? oracle.fetchAll(query).map(\.values)
                let actual = try? db.read { db throws(FerryError) in try db.fetchAll(query).map(\.values) }
                #expect(actual == expected, "\(table) after \(sql)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test(arguments: Placement.available)
    func writesUnderForeignKeysBehaveAsOnTheFinishedTables(placement: Placement) throws {
        let setup = try Setup(placement: placement)
        defer { setup.db.close() }
        try setup.db.step()  // a few messages moved, their conversations still pending
        setup.same("INSERT INTO attachments VALUES (1, 40)")  // a pending message
        setup.same("INSERT INTO pins VALUES (41)")
        setup.same("INSERT INTO messages(id, conversation_id, body) VALUES (100, 7, 'new')")  // a pending conversation
        setup.same("UPDATE messages SET conversation_id = 9 WHERE id = 2")
        setup.same("UPDATE messages SET body = 'edited' WHERE id = 50")  // pending, and so is its conversation
        try setup.db.step()
        setup.same("DELETE FROM conversations WHERE id = 12")  // cascades to pending messages, and on to attachments
        setup.same("UPDATE conversations SET id = 112 WHERE id = 11")  // ON UPDATE CASCADE reaches pending messages
        setup.same("DELETE FROM messages WHERE id = 41")  // pinned: NO ACTION refuses
        setup.same("DELETE FROM conversations WHERE id = 6")  // a pinned message of conversation 6? refuses as on the finished tables
        setup.same("INSERT INTO attachments VALUES (2, 9999)")  // no such message: fails on both
        setup.same("INSERT INTO messages(conversation_id, body) VALUES (999, 'orphan')")
        try setup.db.migrateAllBlocking()
        setup.same("SELECT count(*) FROM messages")
        #expect(try setup.db.read { db throws(FerryError) in try db.fetchAll("PRAGMA foreign_key_check") }.isEmpty)
        #expect(try setup.db.verify().isConsistent)
    }

    /// Child tables and keys the app creates while the tables migrate get the same moves, from the
    /// next statement of the same transaction on.
    @Test(arguments: Placement.available)
    func keysCreatedWhileTablesMigrateMovePendingParentsToo(placement: Placement) throws {
        let setup = try Setup(placement: placement)
        defer { setup.db.close() }
        try setup.db.step()
        let script = [
            "CREATE TABLE notes(id INTEGER PRIMARY KEY, message_id INTEGER REFERENCES messages(id) ON DELETE SET NULL, body TEXT)",
            "INSERT INTO notes VALUES (1, 45, 'on a pending message')",
            "ALTER TABLE attachments ADD COLUMN conversation_id INTEGER REFERENCES conversations(id)",
            "INSERT INTO attachments VALUES (5, 44, 8)",
        ]
        try setup.oracle.transaction { for sql in script { try setup.oracle.execute(sql) } }
        try setup.db.write { db throws(FerryError) in for sql in script { try db.execute(sql) } }
        setup.same("SELECT * FROM notes")
        setup.same("INSERT INTO notes VALUES (2, 46, 'another')")
        setup.same("DELETE FROM messages WHERE id = 46")  // SET NULL
        setup.same("SELECT * FROM notes ORDER BY id")
        try setup.db.migrateAllBlocking()
        setup.same("SELECT * FROM notes ORDER BY id")
        #expect(try setup.db.read { db throws(FerryError) in try db.fetchAll("PRAGMA foreign_key_check") }.isEmpty)
    }

    /// An insert that fails its foreign-key check leaves `lastInsertRowid` as the finished table
    /// does (SQLite keeps the failed row's rowid when the table has a trigger, and Ferry's triggers
    /// are not the app's; found by the differential harness).
    @Test(arguments: Placement.available)
    func aFailedForeignKeyCheckLeavesTheLastRowidAlone(placement: Placement) throws {
        let setup = try Setup(placement: placement)
        defer { setup.db.close() }
        for sql in ["INSERT INTO attachments VALUES (7, 3)", "INSERT INTO attachments(message_id) VALUES (9999)",
                    "INSERT INTO messages(conversation_id) VALUES (999)"] {
            try? setup.oracle.execute(sql)
            _ = try? setup.db.write { db throws(FerryError) in try db.execute(sql) }
            let rowid = try setup.db.write { db throws(FerryError) in db.lastInsertRowid }
            #expect(rowid == setup.oracle.lastInsertRowid, "after \(sql)")
        }
    }

    /// `PRAGMA foreign_key_check` reports the violations of the finished tables: a pending orphan is
    /// one, a moved row whose parent is still pending is not.
    @Test(arguments: Placement.available)
    func foreignKeyCheckReportsTheFinishedTablesViolations(placement: Placement) throws {
        let setup = try Setup(placement: placement, orphan: true)
        defer { setup.db.close() }
        for stage in 0..<3 {
            // Same file: the legacy tables are in the database too (with their own orphan) until
            // cleanup drops them; the oracle has none, so only the forms naming a table compare.
            let everyTable = placement != .sameFile || stage == 2
            for sql in (everyTable ? ["PRAGMA foreign_key_check"] : []) + ["PRAGMA foreign_key_check(messages)",
                        "PRAGMA main.foreign_key_check('messages')", "PRAGMA foreign_key_check(attachments)"] {
                setup.same(sql)
            }
            if stage == 0 { try setup.db.step() } else { try setup.db.migrateAllBlocking() }
        }
        let violations = try setup.db.read { db throws(FerryError) in try db.fetchAll("PRAGMA foreign_key_check").map(\.values) }
        #expect(violations == [[.text("messages"), .integer(61), .text("conversations"), .integer(0)]])
    }

    /// A source table in the target file whose own foreign key references a table the app writes
    /// (`messages_old(conversation_id REFERENCES conversations)`): the moved rows stay in the source
    /// until cleanup, yet deleting or re-keying a parent behaves as on the finished table, whatever
    /// the source's own action (it once refused, or, with CASCADE / SET NULL, changed the source's
    /// moved rows so that cleanup refused for good). Before and after steps, in a transaction, on a
    /// plain and an encrypted file, with a target that cascades and one that refuses.
    @Test(arguments: ["", "ON DELETE CASCADE ON UPDATE CASCADE", "ON DELETE SET NULL ON UPDATE SET NULL"],
          ["ON DELETE CASCADE ON UPDATE CASCADE", ""])
    func aSameFileSourcesOwnForeignKey(sourceAction: String, targetAction: String) throws {
        for cipher in SQLiteEngine.supportsEncryption ? [nil, TestPlacement.key] : [nil] {
            let setup = try SameFileSource(sourceAction: sourceAction, targetAction: targetAction, cipher: cipher)
            defer { setup.db.close() }
            try setup.db.step()
            setup.same("DELETE FROM messages WHERE conversation_id = 3")  // moved and pending rows
            setup.same("DELETE FROM conversations WHERE id = 3")  // nothing references it on the finished table
            setup.same("DELETE FROM conversations WHERE id = 4")  // the target's action decides
            try setup.db.step()
            setup.same("UPDATE conversations SET id = 105 WHERE id = 5")
            setup.same("UPDATE conversations SET title = 'renamed' WHERE id = 6")  // not a key change: nothing moves
            setup.sameInOneTransaction(["DELETE FROM messages WHERE conversation_id = 7", "DELETE FROM conversations WHERE id = 7",
                                        "INSERT INTO messages(id, conversation_id, body) VALUES (100, 8, 'new')"])
            // The target renamed in the same transaction: the retired rows are counted all the same.
            setup.sameInOneTransaction(["ALTER TABLE messages RENAME TO messages2", "DELETE FROM messages2 WHERE conversation_id = 8",
                                        "DELETE FROM conversations WHERE id = 8", "ALTER TABLE messages2 RENAME TO messages"])
            // Finished, its source not cleaned yet: the moved rows are all still there.
            while try setup.db.progress().tables.first?.state != .finished { try setup.db.step() }
            let sourceRows = try setup.db.read { db throws(FerryError) in try db.scalar("SELECT count(*) FROM messages_old", as: Int.self) }
            #expect((sourceRows ?? 0) > 0)
            setup.same("DELETE FROM conversations WHERE id = 10")
            try setup.db.migrateAllBlocking()
            setup.same("SELECT count(*) FROM messages")
            let verification = try setup.db.verify()
            #expect(verification.isConsistent, "\(verification.tables)")
            setup.same("DELETE FROM conversations WHERE id = 9")
            let left = try setup.db.read { db throws(FerryError) in
                try db.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'messages_old'", as: Int.self)
            }
            #expect(left == 0)
        }
    }

    /// A parent deleted while cleanup is counting the source's rows (a count of several steps,
    /// over rows some of which then go): the count starts over, and cleanup ends.
    @Test func aParentDeletedWhileCleanupCounts() throws {
        let setup = try SameFileSource(sourceAction: "", targetAction: "ON DELETE CASCADE", cipher: nil, rows: 70_000, batchRows: 35_000)
        defer { setup.db.close() }
        while try setup.db.progress().tables.first?.state != .finished { try setup.db.step() }
        let report = try #require(try setup.db.step())  // the count's first chunk: nothing deleted yet
        #expect(report.kind == .cleanup && report.sourceRowsDeleted == 0 && !report.sourceCleaned)
        setup.same("DELETE FROM conversations WHERE id = 1")  // 7,000 source rows, in the counted chunk and after it
        try setup.db.migrateAllBlocking()
        setup.same("SELECT count(*) FROM messages")
        #expect(try setup.db.verify().isConsistent)
    }

    /// With a filter, the source keeps the rows that do not match, under its own key, as on the
    /// finished tables; the rows that moved are told by the batches' records and the moved set, and
    /// leave the source ahead of a parent's delete or re-key (recorded with their digests, which
    /// cleanup and verify account for). Every action of the source's key and the target's, plain
    /// and encrypted, before and after steps, in a transaction, with the target renamed, finished
    /// but not cleaned; the source's rows that stay are the finished file's.
    /// A source without rowid too, its rows told by their keys.
    @Test(arguments: ["", "ON DELETE CASCADE ON UPDATE CASCADE", "ON DELETE SET NULL ON UPDATE SET NULL"],
          ["ON DELETE CASCADE ON UPDATE CASCADE", ""])
    func aFilteredSameFileSourcesOwnForeignKey(sourceAction: String, targetAction: String) throws {
        let variants: [(cipher: Cipher?, withoutRowid: Bool)] = [(nil, false), (nil, true)]
            + (SQLiteEngine.supportsEncryption ? [(TestPlacement.key, false)] : [])
        for (cipher, withoutRowid) in variants {
            // Rows 7, 14, ..., 56 stay in the source: conversations 8, 5, 2, 9, 6, 3, 10 and 7 keep
            // a source row each (its own key then decides), 1 and 4 none.
            let setup = try SameFileSource(sourceAction: sourceAction, targetAction: targetAction, cipher: cipher, filter: "id % 7 != 0",
                                           withoutRowid: withoutRowid)
            defer { setup.db.close() }
            try setup.db.step()
            // The function that tells moved rows is Ferry's triggers' alone.
            #expect { try setup.db.write { try $0.execute("SELECT ferry_moved_row(1, 'messages_old', 1)") } } throws: { error in
                if case FerryError.accessDenied? = error as? FerryError { return true }
                return false
            }
            setup.same("DELETE FROM messages WHERE conversation_id = 3")  // moved and pending rows
            setup.same("DELETE FROM conversations WHERE id = 4")  // moved and pending rows reference it, none that stays
            setup.same("DELETE FROM conversations WHERE id = 3")  // a row that stays references it: the source's action decides
            try setup.db.step()
            setup.same("UPDATE conversations SET id = 101 WHERE id = 1")
            setup.same("UPDATE conversations SET id = 105 WHERE id = 5")
            setup.same("UPDATE conversations SET title = 'renamed' WHERE id = 6")
            setup.sameInOneTransaction(["DELETE FROM messages WHERE conversation_id = 101", "DELETE FROM conversations WHERE id = 101",
                                        "INSERT INTO messages(id, conversation_id, body) VALUES (100, 8, 'new')"])
            setup.sameInOneTransaction(["ALTER TABLE messages RENAME TO messages2", "DELETE FROM messages2 WHERE conversation_id = 2",
                                        "ALTER TABLE messages2 RENAME TO messages"])
            setup.same("DELETE FROM conversations WHERE id = 2")
            // Finished, its source not cleaned yet.
            while try setup.db.progress().tables.first?.state != .finished { try setup.db.step() }
            setup.same("DELETE FROM conversations WHERE id = 9")
            let verification = try setup.db.verify()
            #expect(verification.isConsistent, "\(verification.tables)")
            try setup.db.migrateAllBlocking()
            setup.same("SELECT count(*) FROM messages")
            #expect(try setup.db.verify().isConsistent)
            setup.sameSource()
        }
    }

    /// A parent deleted while cleanup is partway through a batch whose rows reference it, and a
    /// new process that picks cleanup up: the rows retired early are accounted for, the rest are
    /// deleted, the source keeps exactly the rows the filter left.
    @Test func aParentDeletedWhileAFilteredSourceIsCleaned() throws {
        var setup: SameFileSource? = try SameFileSource(sourceAction: "ON DELETE CASCADE", targetAction: "ON DELETE CASCADE", cipher: nil,
                                                        filter: "id % 7 != 0", rows: 3_000, batchRows: 3_000)
        while try setup!.db.progress().tables.first?.state != .finished { try setup!.db.step() }
        setup!.db.close()
        // A new process, cleaning in small chunks: the first chunk deletes part of the one batch.
        setup = try setup!.reopened(batchRows: 100)
        let report = try #require(try setup!.db.step())
        #expect(report.kind == .cleanup && report.sourceRowsDeleted > 0 && !report.sourceCleaned)
        setup!.same("DELETE FROM conversations WHERE id = 10")  // rows before and after the chunk
        setup!.db.close()
        setup = try setup!.reopened(batchRows: 100)
        defer { setup!.db.close() }
        setup!.same("DELETE FROM conversations WHERE id = 9")
        try setup!.db.migrateAllBlocking()
        #expect(try setup!.db.verify().isConsistent)
        setup!.sameSource()
        let record = try setup!.db.read { db throws(FerryError) in
            try db.scalar("SELECT count(*) FROM ferry_migration_retired_rows", as: Int.self)
        }
        #expect(record == 0, "forgotten once the source is cleaned")
    }

    /// `conversations` (10 rows), the source `messages_old` (60 rows, in the same file) and the
    /// target `messages`, each message referencing a conversation; the oracle holds the finished
    /// tables.
    struct SameFileSource {
        let box: Sandbox
        let oracle: Connection
        let db: FerryDatabase
        let cipher: Cipher?
        let filter: String?

        init(sourceAction: String, targetAction: String, cipher: Cipher?, filter: String? = nil, withoutRowid: Bool = false,
             rows count: Int = 60, batchRows: Int = 20) throws {
            box = Sandbox()
            let app = box.path("app.db")
            let parents = """
                CREATE TABLE conversations(id INTEGER PRIMARY KEY, title TEXT);
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 10) INSERT INTO conversations SELECT x, 'c' || x FROM n;
                """
            let target = "CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER REFERENCES conversations(id) \(targetAction), body TEXT);"
            let rows = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < \(count)) INSERT INTO {t} SELECT x, x % 10 + 1, 'm' || x FROM n"
            let file = try Connection(path: app, configuration: .init(cipher: cipher))
            try file.execute(parents + target + "CREATE TABLE messages_old(id INTEGER PRIMARY KEY, "
                             + "conversation_id INTEGER REFERENCES conversations(id) \(sourceAction), body TEXT)\(withoutRowid ? " WITHOUT ROWID" : "");"
                             + rows.replacingOccurrences(of: "{t}", with: "messages_old"))
            file.close()
            oracle = try Connection.inMemory()
            try oracle.execute("PRAGMA foreign_keys = ON;" + parents + target + rows.replacingOccurrences(of: "{t}", with: "messages") + ";")
            if let filter {
                // The finished file: the rows the filter leaves stay in the source, under its own key.
                try oracle.execute("CREATE TABLE messages_old(id INTEGER PRIMARY KEY, conversation_id INTEGER REFERENCES conversations(id) "
                                   + "\(sourceAction), body TEXT); INSERT INTO messages_old SELECT * FROM messages WHERE NOT (\(filter)); "
                                   + "DELETE FROM messages WHERE NOT (\(filter))")
            }
            self.cipher = cipher
            self.filter = filter
            db = try Self.open(app, cipher: cipher, filter: filter, batchRows: batchRows)
        }

        private init(box: Sandbox, oracle: Connection, cipher: Cipher?, filter: String?, batchRows: Int) throws {
            self.box = box
            self.oracle = oracle
            self.cipher = cipher
            self.filter = filter
            db = try Self.open(box.path("app.db"), cipher: cipher, filter: filter, batchRows: batchRows)
        }

        private static func open(_ path: String, cipher: Cipher?, filter: String?, batchRows: Int) throws -> FerryDatabase {
            let plan = MigrationPlan(sources: [MigrationSource(.targetFile, tables: [TableMapping(target: "messages", source: "messages_old", filter: filter)])])
            return try FerryDatabase(path: path, configuration: .init(cipher: cipher), plan: plan, options: .fixedBatches(of: batchRows))
        }

        /// The same file opened again (`db` closed first), as by a new process.
        func reopened(batchRows: Int) throws -> SameFileSource {
            try SameFileSource(box: box, oracle: oracle, cipher: cipher, filter: filter, batchRows: batchRows)
        }

        /// Once cleaned: the source holds the finished file's rows (a filter's others), or is gone.
        func sameSource(sourceLocation: SourceLocation = #_sourceLocation) {
            let query = "SELECT * FROM messages_old ORDER BY 1"
            let expected = filter == nil ? nil : try? oracle.fetchAll(query).map(\.values)
            let actual = try? db.read { db throws(FerryError) in try db.fetchAll(query).map(\.values) }
            #expect(actual == expected, "messages_old", sourceLocation: sourceLocation)
        }

        /// Runs `sql` on both; expects the same outcome (rows, or failure) and the same tables.
        func same(_ sql: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let finished: String
            do { finished = "\(try oracle.fetchAll(sql).map(\.values))" } catch { finished = "error \(FerryError(error).resultCode?.primary as Any)" }
            let ferry: String
            do { ferry = "\(try db.write { db throws(FerryError) in try db.fetchAll(sql).map(\.values) })" } catch {
                ferry = "error \(error.resultCode?.primary as Any): \(error)"
            }
            #expect(ferry.hasPrefix(finished), "\(sql)", sourceLocation: sourceLocation)
            sameTables(after: sql, sourceLocation: sourceLocation)
        }

        func sameInOneTransaction(_ script: [String], sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(throws: Never.self, sourceLocation: sourceLocation) {
                try oracle.transaction { for sql in script { try oracle.execute(sql) } }
                try db.write { db throws(FerryError) in for sql in script { try db.execute(sql) } }
            }
            sameTables(after: script.joined(separator: "; "), sourceLocation: sourceLocation)
        }

        func sameTables(after sql: String, sourceLocation: SourceLocation) {
            for table in ["conversations", "messages"] {
                let query = "SELECT * FROM \(table) ORDER BY 1"
                let expected = try? oracle.fetchAll(query).map(\.values)
                let actual = try? db.read { db throws(FerryError) in try db.fetchAll(query).map(\.values) }
                #expect(actual == expected, "\(table) after \(sql)", sourceLocation: sourceLocation)
            }
        }
    }
}
