import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

extension Faults {
    /// Regression tests for cleanup bugs the systematic fault injection found.
    @Suite(.timeLimit(.minutes(2)))
    struct CleanupFaultTests {
        /// A migrated 200-row source, stepped through the fault VFS until the table finished (cleanup
        /// comes next).
        static func finishedMigration(_ box: Sandbox) throws -> (db: FerryDatabase, app: String, legacy: String, plan: MigrationPlan, options: FerryDatabase.Options) {
            let legacy = try box.makeLegacy(rows: 200)
            let app = box.path("app.db")
            let plan = MigrationPlan.messages(from: legacy)
            var options = FerryDatabase.Options()
            options.fixedBatchRows = 40
            let db = try FerryDatabase(path: app, configuration: FaultVFS.configuration(), plan: plan, options: options)
            while let report = try db.step(), !report.tableFinished {}
            return (db, app, legacy, plan, options)
        }

        static func sourceTableExists(_ legacy: String) throws -> Bool {
            let source = try Connection(path: legacy)
            defer { source.close() }
            return try source.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'messages'", as: Int.self) == 1
        }

        /// Bug: a cleanup chunk whose commit failed (I/O error, disk full on the source) was counted as
        /// cleaned in memory, so its rows were never deleted in this process, the source table was not
        /// empty when cleanup ended, and it was marked cleaned with those rows left behind.
        @Test func aCleanupChunkWhoseCommitFailedIsDeletedAgain() throws {
            let box = Sandbox()
            let (db, _, legacy, _, _) = try Self.finishedMigration(box)
            defer { db.close() }
            let rule = FaultVFS.arm(path: legacy, files: .wal, operations: [.write], trigger: .nth(0), failure: .full)
            #expect { try db.step() } throws: { ($0 as? FerryError)?.resultCode?.primary == .full }
            rule.disarm()
            #expect(rule.fired == 1)
            try db.migrateAllBlocking()
            #expect(try !Self.sourceTableExists(legacy))
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 200)
        }

        /// Steps cleanup until every moved row left the source: the next step drops the source table
        /// and marks the table cleaned.
        static func cleanUntilEmpty(_ db: FerryDatabase, legacy: String) throws {
            while try rowsInSource(legacy) > 0 { try db.step() }
        }

        static func rowsInSource(_ legacy: String) throws -> Int {
            let source = try Connection(path: legacy)
            defer { source.close() }
            return try source.scalar("SELECT count(*) FROM messages", as: Int.self) ?? -1
        }

        static func cleanedMarks(_ app: String) throws -> Int {
            let target = try Connection(path: app)
            defer { target.close() }
            return try target.scalar("SELECT count(*) FROM ferry_migration_tables WHERE source_cleaned = 1", as: Int.self) ?? -1
        }

        /// Bug: the last cleanup transaction dropped the source table and marked the table cleaned in
        /// the target together. In WAL mode such a transaction commits file by file, target first: when
        /// the source's commit failed, the target said "cleaned" and the (empty) source table was never
        /// dropped. Now the drop commits alone, before the mark.
        @Test(arguments: Recovery.allCases)
        func aFailedDropOfTheSourceTableIsRetried(recovery: Recovery) throws {
            let box = Sandbox()
            var (db, app, legacy, plan, options) = try Self.finishedMigration(box)
            defer { db.close() }
            try Self.cleanUntilEmpty(db, legacy: legacy)
            let rule = FaultVFS.arm(path: legacy, files: .wal, operations: [.write], trigger: .from(0), failure: .ioError)
            #expect { try db.step() } throws: { ($0 as? FerryError)?.resultCode?.primary == .ioError }
            rule.disarm()
            #expect(try Self.sourceTableExists(legacy))
            #expect(try Self.cleanedMarks(app) == 0)
            if recovery == .reopen {
                db.close()
                db = try FerryDatabase(path: app, configuration: FaultVFS.configuration(), plan: plan, options: options)
            }
            try db.migrateAllBlocking()
            #expect(try !Self.sourceTableExists(legacy))
            #expect(try Self.cleanedMarks(app) == 1)
        }

        /// The other order: the drop committed, the mark in the target failed. The next step (or the
        /// next open) finds the source table gone and records the table as cleaned, instead of failing
        /// on the missing table.
        @Test(arguments: Recovery.allCases)
        func aDropWhoseMarkFailedIsRecordedLater(recovery: Recovery) throws {
            let box = Sandbox()
            var (db, app, legacy, plan, options) = try Self.finishedMigration(box)
            defer { db.close() }
            try Self.cleanUntilEmpty(db, legacy: legacy)
            let rule = FaultVFS.arm(path: app, files: .wal, operations: [.write], trigger: .from(0), failure: .full)
            #expect { try db.step() } throws: { ($0 as? FerryError)?.resultCode?.primary == .full }
            rule.disarm()
            #expect(try !Self.sourceTableExists(legacy))
            #expect(try Self.cleanedMarks(app) == 0)
            if recovery == .reopen {
                db.close()
                db = try FerryDatabase(path: app, configuration: FaultVFS.configuration(), plan: plan, options: options)
                #expect(try Self.cleanedMarks(app) == 1)
            }
            try db.migrateAllBlocking()
            #expect(try Self.cleanedMarks(app) == 1)
            #expect(try db.isMigrated)
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 200)
        }
    }
}
