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
        /// - Parameter chunked: with a filter (matching every row), cleanup deletes in chunks and
        ///   drops the emptied table; without one it retires the source table in one statement.
        static func finishedMigration(_ box: Sandbox, chunked: Bool = true) throws
            -> (db: FerryDatabase, app: String, legacy: String, plan: MigrationPlan, options: FerryDatabase.Options) {
            let legacy = try box.makeLegacy(rows: 200)
            let app = box.path("app.db")
            let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [
                TableMapping(target: "messages", source: "messages", filter: chunked ? "conversation_id >= 0" : nil),
            ])])
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
        /// and marks the table cleaned. (Without chunks the table is dropped full, by a later step.)
        static func cleanUntilEmpty(_ db: FerryDatabase, legacy: String, chunked: Bool) throws {
            guard chunked else { return }
            while try rowsInSource(legacy) > 0 { try db.step() }
        }

        /// Steps until one fails (at most a few steps: the count before a retirement writes no source
        /// page), and returns the error.
        static func stepUntilFailure(_ db: FerryDatabase) -> FerryError? {
            for _ in 0..<10 {
                do { if try db.step() == nil { return nil } } catch { return error }
            }
            return nil
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
        @Test(arguments: Recovery.allCases, [true, false])
        func aFailedDropOfTheSourceTableIsRetried(recovery: Recovery, chunked: Bool) throws {
            let box = Sandbox()
            var (db, app, legacy, plan, options) = try Self.finishedMigration(box, chunked: chunked)
            defer { db.close() }
            try Self.cleanUntilEmpty(db, legacy: legacy, chunked: chunked)
            let rule = FaultVFS.arm(path: legacy, files: .wal, operations: [.write], trigger: .from(0), failure: .ioError)
            #expect(Self.stepUntilFailure(db)?.resultCode?.primary == .ioError)
            rule.disarm()
            #expect(try Self.sourceTableExists(legacy))
            #expect(try Self.rowsInSource(legacy) == (chunked ? 0 : 200))  // a failed retirement deleted nothing
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
        /// (Chunked: a retirement writes the target's count mark, then the source, then the mark in
        /// one step, so the fault cannot single out the mark; its recovery is the same code.)
        @Test(arguments: Recovery.allCases)
        func aDropWhoseMarkFailedIsRecordedLater(recovery: Recovery) throws {
            let box = Sandbox()
            var (db, app, legacy, plan, options) = try Self.finishedMigration(box)
            defer { db.close() }
            try Self.cleanUntilEmpty(db, legacy: legacy, chunked: true)
            let rule = FaultVFS.arm(path: app, files: .wal, operations: [.write], trigger: .from(0), failure: .full)
            #expect(Self.stepUntilFailure(db)?.resultCode?.primary == .full)
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
