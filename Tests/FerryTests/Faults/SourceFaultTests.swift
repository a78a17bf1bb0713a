import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

extension Faults {
    /// The source file goes away (deleted, renamed) or becomes unreadable in the middle of a
    /// migration, then comes back.
    @Suite(.timeLimit(.minutes(2)))
    struct SourceFaultTests {
        static let sourceRows = 5000

        struct Setup {
            let box = Sandbox()
            let legacy: String
            let app: String
            let plan: MigrationPlan
            var options = FerryDatabase.Options()
            /// - Parameter filter: nil, or a filter (matching every row here) that makes cleanup delete in
            ///   chunks instead of retiring the source table in one statement.
            init(filter: String? = nil) throws {
                legacy = try box.makeLegacy(rows: SourceFaultTests.sourceRows)
                app = box.path("app.db")
                plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [TableMapping(target: "messages", source: "messages", filter: filter)])])
                options.fixedBatchRows = 200
            }
            func open() throws(FerryError) -> FerryDatabase {
                try FerryDatabase(path: app, configuration: FaultVFS.configuration(), plan: plan, options: options)
            }
            /// The target as it is on disk: integrity, rows and cursor.
            func targetState() throws -> (integrity: String?, rows: Int?, cursor: Int64?) {
                let raw = try Connection(path: app)
                defer { raw.close() }
                return (try raw.scalar("PRAGMA integrity_check", as: String.self),
                        try raw.scalar("SELECT count(*) FROM messages", as: Int.self),
                        try raw.scalar("SELECT cursor FROM ferry_migration_tables", as: Int64.self))
            }
        }

        static func isUnavailable(_ error: any Error, path: String) -> Bool {
            guard case FerryError.sourceUnavailable(let failing, _)? = error as? FerryError else { return false }
            return failing == path && "\(error)".contains(path)
        }

        enum Disappearance: CaseIterable { case renamed, deletedThenRestoredFromACopy }

        /// Waits until the app's connections check their source files again at their next use.
        static func waitForTheNextFileCheck(_ options: FerryDatabase.Options) {
            Thread.sleep(forTimeInterval: options.sourceFileCheckInterval.seconds + 0.005)
        }

        @Test(arguments: Disappearance.allCases)
        func aVanishedSourceStopsStepsAndReadsWithATypedErrorAndTheMigrationResumesWhenItIsBack(how: Disappearance) throws {
            let setup = try Setup()
            let db = try setup.open()
            defer { db.close() }
            for _ in 0..<3 { try db.step() }
            try db.write { try $0.execute("INSERT INTO messages(conversation_id, body) VALUES (7, 'app')") }
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == Self.sourceRows + 1)
            // Views read the migrating table, one through the other.
            try db.write { try $0.execute("CREATE VIEW recent AS SELECT id FROM messages WHERE id > 10; CREATE VIEW recent_ids AS SELECT * FROM recent") }

            let aside = setup.box.path("aside.db")
            switch how {
            case .renamed:
                try FileManager.default.moveItem(atPath: setup.legacy, toPath: aside)
            case .deletedThenRestoredFromACopy:
                try FileManager.default.copyItem(atPath: setup.legacy, toPath: aside)
                try FileManager.default.removeItem(atPath: setup.legacy)
            }
            let before = try setup.targetState()
            #expect { try db.step() } throws: { Self.isUnavailable($0, path: setup.legacy) }
            // Until its next check of the file (`sourceFileCheckInterval`), a connection reads the
            // file it has open: the rows it held, or the typed error once it checked.
            do {
                #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == Self.sourceRows + 1)
            } catch {
                #expect(Self.isUnavailable(error, path: setup.legacy), "\(error)")
            }
            Self.waitForTheNextFileCheck(setup.options)
            #expect { try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } } throws: { Self.isUnavailable($0, path: setup.legacy) }
            #expect { try db.write { try $0.execute("DELETE FROM messages WHERE id = 4000") } } throws: { Self.isUnavailable($0, path: setup.legacy) }
            #expect { try db.write { try $0.execute("INSERT INTO messages(id, conversation_id, body) VALUES (4000, 1, 'x')") } } throws: { Self.isUnavailable($0, path: setup.legacy) }
            // Through views too, the one reading the other included: the typed error, not SQLite's "no such table".
            for view in ["recent", "recent_ids"] {
                #expect { try db.read { try $0.scalar("SELECT count(*) FROM \(view)", as: Int.self) } } throws: { Self.isUnavailable($0, path: setup.legacy) }
            }
            // The rest of the database works: other tables, the catalog, progress.
            try db.write { try $0.execute("CREATE TABLE notes(x); INSERT INTO notes VALUES (1)") }
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM notes", as: Int.self) } == 1)
            // 600 by the steps, and row 601, which the app's insert moved ahead (its new row takes the
            // finished table's next rowid, so the pending row of the current one moves first).
            #expect(try db.progress(countingRowsLeft: true).tables.first?.rowsMoved == 601)
            // The target did not change, and the failures are reported.
            let after = try setup.targetState()
            #expect(after.integrity == "ok")
            #expect(after.rows == before.rows && after.cursor == before.cursor)
            // Three batches, the app's row, and the source's last row, which the insert moved first
            // (so SQLite chose the rowid the finished table would).
            #expect(after.rows == 3 * 200 + 2)
            #expect(try db.progress().tables.first?.state == .failed)
            // A new instance cannot open the target while the source is missing either.
            db.close()
            #expect { try setup.open() } throws: { Self.isUnavailable($0, path: setup.legacy) }

            switch how {
            case .renamed:
                try FileManager.default.moveItem(atPath: aside, toPath: setup.legacy)
            case .deletedThenRestoredFromACopy:
                try FileManager.default.copyItem(atPath: aside, toPath: setup.legacy)
            }
            let reopened = try setup.open()
            defer { reopened.close() }
            try reopened.migrateAllBlocking()
            #expect(try reopened.isMigrated)
            #expect(try reopened.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == Self.sourceRows + 1)
            #expect(try setup.targetState().integrity == "ok")
        }

        /// An app connection checks that its source file is still at its path once per
        /// `sourceFileCheckInterval`: until then it reads and moves rows from the file it has open
        /// (the same rows: a migrating source is read-only), and nothing is lost or moved twice
        /// once the file is back. With a zero interval, the next statement fails.
        @Test(arguments: [Duration.zero, .seconds(3600)])
        func aConnectionUsesTheFileItHasOpenUntilItsNextCheck(interval: Duration) throws {
            var setup = try Setup()
            setup.options.sourceFileCheckInterval = interval
            let db = try setup.open()
            defer { db.close() }
            try db.step()
            let count = { () throws -> Int? in try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } }
            #expect(try count() == Self.sourceRows)  // the reader checked its file
            let aside = setup.box.path("aside.db")
            try FileManager.default.moveItem(atPath: setup.legacy, toPath: aside)
            if interval == .zero {
                #expect { try count() } throws: { Self.isUnavailable($0, path: setup.legacy) }
                #expect { try db.write { try $0.execute("DELETE FROM messages WHERE id = 4000") } } throws: { Self.isUnavailable($0, path: setup.legacy) }
            } else {
                #expect(try count() == Self.sourceRows)
                try db.write { try $0.execute("DELETE FROM messages WHERE id = 4000; UPDATE messages SET body = 'moved' WHERE id = 4001") }
                #expect(try count() == Self.sourceRows - 1)
            }
            #expect { try db.step() } throws: { Self.isUnavailable($0, path: setup.legacy) }
            try FileManager.default.moveItem(atPath: aside, toPath: setup.legacy)
            try db.migrateAllBlocking()
            let deleted = interval == .zero ? 0 : 1
            #expect(try count() == Self.sourceRows - deleted)
            let changed = try db.read { try $0.scalar("SELECT count(*) FROM messages WHERE body = 'moved'", as: Int.self) }
            #expect(changed == deleted)
            #expect(try db.verify().isConsistent)
        }

        /// The same database instance goes on once the file is back (renamed back, or a copy put
        /// back: a new file at the same path is attached again).
        @Test(arguments: Disappearance.allCases)
        func theOpenDatabaseResumesWhenTheFileIsBack(how: Disappearance) throws {
            let setup = try Setup()
            let db = try setup.open()
            defer { db.close() }
            for _ in 0..<3 { try db.step() }
            let aside = setup.box.path("aside.db")
            switch how {
            case .renamed: try FileManager.default.moveItem(atPath: setup.legacy, toPath: aside)
            case .deletedThenRestoredFromACopy:
                try FileManager.default.copyItem(atPath: setup.legacy, toPath: aside)
                try FileManager.default.removeItem(atPath: setup.legacy)
            }
            #expect { try db.step() } throws: { Self.isUnavailable($0, path: setup.legacy) }
            switch how {
            case .renamed: try FileManager.default.moveItem(atPath: aside, toPath: setup.legacy)
            case .deletedThenRestoredFromACopy: try FileManager.default.copyItem(atPath: aside, toPath: setup.legacy)
            }
            try db.migrateAllBlocking()
            #expect(try db.isMigrated)
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == Self.sourceRows)
            let rows = try db.read { c in try c.fetchAll("SELECT id FROM messages ORDER BY id").map { try $0.get(0, as: Int64.self) } }
            #expect(rows == Array(1...Int64(Self.sourceRows)))
        }

        /// The source's file cannot be opened or read any more (simulated by the fault VFS: every open
        /// fails with SQLITE_CANTOPEN, every read with SQLITE_IOERR_READ).
        @Test func anUnreadableSourceFailsStepsWithATypedErrorNamingItAndTheMigrationResumes() throws {
            let setup = try Setup()
            let db = try setup.open()
            defer { db.close() }
            for _ in 0..<3 { try db.step() }
            let before = try setup.targetState()
            let rule = FaultVFS.arm(path: setup.legacy, operations: [.open, .read], trigger: .from(0), failure: .ioError)
            for _ in 0..<3 {
                #expect { try db.step() } throws: { Self.isUnavailable($0, path: setup.legacy) }
            }
            // A new reader cannot attach the source either; the error names it.
            db.close()
            #expect { try setup.open() } throws: { Self.isUnavailable($0, path: setup.legacy) }
            #expect(rule.fired > 0)
            let after = try setup.targetState()
            #expect(after.integrity == "ok" && after.rows == before.rows && after.cursor == before.cursor)

            rule.disarm()
            let reopened = try setup.open()
            defer { reopened.close() }
            try reopened.migrateAllBlocking()
            #expect(try reopened.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == Self.sourceRows)
        }

        /// A source needed only for cleanup (its tables finished) may be missing: the database opens
        /// and works, cleanup steps report the source as unavailable, and cleanup completes once it is
        /// back.
        @Test func aMissingSourceAwaitingOnlyCleanupDoesNotStopTheDatabase() throws {
            let setup = try Setup()
            do {
                let db = try setup.open()
                defer { db.close() }
                while let report = try db.step(), !report.tableFinished {}
            }
            let aside = setup.box.path("aside.db")
            try FileManager.default.moveItem(atPath: setup.legacy, toPath: aside)
            let db = try setup.open()
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == Self.sourceRows)
            try db.write { try $0.execute("DELETE FROM messages WHERE id = 1") }
            #expect(try db.isMigrated)
            // Cleanup has nothing to do in this launch: the source is not there.
            #expect(try db.step() == nil)
            db.close()
            try FileManager.default.moveItem(atPath: aside, toPath: setup.legacy)
            let back = try setup.open()
            defer { back.close() }
            try back.migrateAllBlocking()
            let source = try Connection(path: setup.legacy)
            #expect(try source.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'messages'", as: Int.self) == 0)
        }

        /// The source vanishes while its table awaits cleanup in an open database: cleanup steps fail
        /// with a typed error, the app goes on reading and writing, and cleanup resumes when it is back.
        @Test func aSourceVanishingDuringCleanupOnlyStopsCleanup() throws {
            let setup = try Setup(filter: "conversation_id >= 0")  // cleanup in chunks
            let db = try setup.open()
            defer { db.close() }
            while let report = try db.step(), !report.tableFinished {}
            try db.step()  // one cleanup chunk
            let aside = setup.box.path("aside.db")
            try FileManager.default.moveItem(atPath: setup.legacy, toPath: aside)
            #expect { try db.step() } throws: { Self.isUnavailable($0, path: setup.legacy) }
            try db.write { try $0.execute("DELETE FROM messages WHERE id = 1") }
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == Self.sourceRows - 1)
            try FileManager.default.moveItem(atPath: aside, toPath: setup.legacy)
            try db.migrateAllBlocking()
            let source = try Connection(path: setup.legacy)
            #expect(try source.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'messages'", as: Int.self) == 0)
        }
    }
}
