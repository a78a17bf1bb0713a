import FerryTestSupport
import Foundation
import Synchronization
import Testing
@testable import Ferry
@testable import FerrySQLite

/// Several tables from several sources; progress: exact and estimated rows left, per-table rate
/// and ETA, the failed state.
@Suite(.timeLimit(.minutes(2))) struct ProgressTests {
    /// Two source files (one encrypted when the engine can) and the target file itself feed four
    /// tables, one of them filtered. Every row arrives exactly once, each table finishes exactly
    /// once, sources are detached and cleaned as they finish, and progress adds up at every step.
    @Test func severalTablesFromSeveralSources() throws {
        let box = Sandbox()
        let archiveCipher: Cipher? = SQLiteEngine.supportsEncryption ? .passphrase("archive key", settings: .sqlcipher3) : nil
        let legacy = try box.makeLegacy(rows: 3000)
        let archive = try box.makeLegacy(rows: 1200, name: "archive.db", cipher: archiveCipher, table: "old_messages")
        let contacts = box.path("contacts.db")
        do {
            let db = try Connection(path: contacts)
            try db.execute("""
                CREATE TABLE people(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 700)
                INSERT INTO people SELECT x, 'person ' || x FROM n;
                """)
        }
        let app = box.path("app.db")
        try box.makeLegacy(rows: 500, name: "app.db", table: "settings_v1")  // a same-file source
        let plan = MigrationPlan(sources: [
            MigrationSource(.file(legacy), tables: [TableMapping(target: "messages", source: "messages", filter: "conversation_id <> 0")]),
            MigrationSource(.file(archive), cipher: archiveCipher, tables: [TableMapping(target: "archived", source: "old_messages")]),
            MigrationSource(.file(contacts), tables: [TableMapping(target: "people", source: "people")]),
            MigrationSource(.targetFile, tables: [TableMapping(target: "settings", source: "settings_v1")]),
        ])
        let recorder = EventRecorder()
        let db = try FerryDatabase(path: app, plan: plan)
        db.onEvent { recorder.append($0) }
        let initial = try db.progress()
        #expect(initial.tables.map(\.name) == ["messages", "archived", "people", "settings"])
        #expect(initial.tables.map(\.rowsLeft) == [2000, 1200, 700, 500])
        #expect(initial.tables.allSatisfy { $0.state == .pending })

        var total: Int64 = 0
        while let report = try db.step(budget: .milliseconds(2)) {
            total += Int64(report.rowsMoved)
            let progress = try db.progress(countingRowsLeft: true)
            #expect(progress.rowsLeftIsExact)
            #expect(progress.rowsMoved + progress.rowsLeft == 4400, "moved and left add up after \(report)")
        }
        #expect(total == 4400)
        #expect(try db.isMigrated)

        let counts = try db.read { c in
            try ["messages", "archived", "people", "settings"].map { try c.scalar("SELECT count(*) FROM \($0)", as: Int.self) ?? -1 }
        }
        #expect(counts == [2000, 1200, 700, 500])
        #expect(try db.read { try $0.scalar("SELECT count(DISTINCT id) FROM messages WHERE conversation_id = 0", as: Int.self) } == 0)
        let finished = recorder.events.compactMap { if case .tableFinished(let t) = $0 { t } else { nil } }
        #expect(finished.sorted() == ["archived", "messages", "people", "settings"])
        #expect(recorder.events.filter { $0 == .allFinished }.count == 1)
        let attached = try db.pool.writeWithoutTransaction { try $0.fetchAll("PRAGMA database_list").map { try $0.get(1, as: String.self) } }
        #expect(attached.filter { $0 != "main" && $0 != "temp" }.isEmpty, "every finished source is detached: \(attached)")
        let attachedOnReader = try db.pool.read { try $0.fetchAll("PRAGMA database_list").map { try $0.get(1, as: String.self) } }
        #expect(attachedOnReader.filter { $0 != "main" && $0 != "temp" }.isEmpty, "readers let go too: \(attachedOnReader)")
        db.close()

        // Sources: the filtered one keeps its other rows, the others are dropped.
        #expect(try Connection(path: legacy).scalar("SELECT count(*) FROM messages", as: Int.self) == 1000)
        #expect(try Connection(path: archive, configuration: .init(cipher: archiveCipher))
            .scalar("SELECT count(*) FROM sqlite_master WHERE name = 'old_messages'", as: Int.self) == 0)
        #expect(try Connection(path: contacts).scalar("SELECT count(*) FROM sqlite_master WHERE name = 'people'", as: Int.self) == 0)
        #expect(try Connection(path: app).scalar("SELECT count(*) FROM sqlite_master WHERE name = 'settings_v1'", as: Int.self) == 0)
    }

    /// The estimate drifts when the app deletes pending rows; a counted progress is exact. Rates
    /// and ETAs are per table.
    @Test func rowsLeftAreEstimatedOrCountedAndRatesArePerTable() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 4000)
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [
            TableMapping(target: "odd", source: "messages", filter: "id % 2 = 1"),
            TableMapping(target: "even", source: "messages"),
        ])])
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan)
        // One batch of one table only: the rotation picks one table per step.
        let report = try #require(try db.step())
        let stepped = report.table
        let other = stepped == "odd" ? "even" : "odd"
        // The app deletes 500 pending rows of the other table (all still in the source).
        let deleted = try db.write { c in
            try c.execute("DELETE FROM \(other) WHERE id > 3000")
            return c.changes
        }
        #expect(deleted == 500)

        let estimated = try db.progress()
        let counted = try db.progress(countingRowsLeft: true)
        // Rows still pending = rows the app sees in the table minus rows already in the target.
        let visible = try db.read { c in try [stepped, other].map { try c.scalar("SELECT count(*) FROM \($0)", as: Int64.self) ?? 0 } }
        let inTarget = try db.pool.read { c in try [stepped, other].map { try c.scalar("SELECT count(*) FROM main.\($0)", as: Int64.self) ?? 0 } }
        let exactLeft = zip(visible, inTarget).map { $0 - $1 }
        func table(_ progress: MigrationProgress, _ name: String) throws -> MigrationProgress.Table {
            try #require(progress.tables.first { $0.name == name })
        }
        #expect(try table(estimated, other).rowsLeftIsExact == false)
        #expect(try table(counted, other).rowsLeftIsExact)
        #expect(try table(counted, stepped).rowsLeft == exactLeft[0])
        #expect(try table(counted, other).rowsLeft == exactLeft[1])
        // The app's delete moved its 500 pending rows ahead (then deleted them): they count as moved,
        // so the estimate sees them too.
        #expect(try table(estimated, other).rowsLeft == exactLeft[1], "the estimate counts the rows the app's writes moved")
        #expect(try table(estimated, other).rowsMoved == 500)

        #expect(try table(estimated, stepped).rowsPerSecond > 0)
        #expect(try table(estimated, stepped).estimatedTimeLeft != nil)
        #expect(try table(estimated, other).rowsPerSecond == 0)
        #expect(try table(estimated, other).estimatedTimeLeft == nil, "no batch of this table yet: no ETA")
        #expect(try table(estimated, other).state == .pending, "the stepper has not started it")

        try db.migrateAllBlocking()
        let done = try db.progress()
        #expect(done.isFinished && done.rowsLeft == 0 && done.rowsLeftIsExact && done.estimatedTimeLeft == .zero)
    }

    /// A table whose batches fail is `failed` with the error until a step on it succeeds; the
    /// other tables keep migrating.
    @Test func failingTableIsReportedUntilAStepSucceeds() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 300)
        let app = box.path("app.db")
        try Connection(path: app).execute("""
            CREATE TABLE broken(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL CONSTRAINT injected_failure CHECK (conversation_id < 0), body TEXT);
            """)
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [
            TableMapping(target: "broken", source: "messages", filter: "id <= 100"),
            TableMapping(target: "fine", source: "messages"),
        ])])
        let db = try FerryDatabase(path: app, plan: plan)
        var failures = 0
        for _ in 0..<40 {
            do { if try db.step() == nil { break } } catch { failures += 1 }
            if failures > 0, try db.progress().tables.first(where: { $0.name == "fine" })?.state == .finished { break }
        }
        #expect(failures > 0)
        let progress = try db.progress()
        let broken = try #require(progress.tables.first { $0.name == "broken" })
        #expect(broken.state == .failed)
        #expect("\(String(describing: broken.lastError))".contains("injected_failure"))
        #expect(progress.failedTables.map(\.name) == ["broken"])
        #expect(progress.tables.first { $0.name == "fine" }?.state == .finished)

        // The fault goes away: the next step on the table succeeds and clears the failure.
        try db.pool.writeWithoutTransaction { try $0.execute("PRAGMA ignore_check_constraints = ON") }
        try db.migrateAllBlocking()
        let healed = try db.progress()
        #expect(healed.failedTables.isEmpty)
        #expect(healed.tables.allSatisfy { $0.state == .finished && $0.lastError == nil })
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM broken", as: Int.self) } == 100)
    }
}

/// Linearity and cancellation of the stepper.
@Suite(.timeLimit(.minutes(2))) struct StepperWorkTests {
    /// Total work (SQLite instructions, a deterministic count) of migrating a filtered table where a
    /// third of the rows match. The cursor only moves forward, so non-matching rows are scanned once
    /// in total: ten times the rows costs about ten times the work, where rescanning would cost a
    /// hundred times.
    @Test func filteredMigrationStaysLinear() throws {
        func work(rows: Int) throws -> Int {
            let box = Sandbox()
            let legacy = try box.makeLegacy(rows: rows)
            // Not indexed on purpose: an index on the filter column would hide a rescan.
            try Connection(path: legacy).execute("DROP INDEX messages_conversation")
            let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [
                TableMapping(target: "messages", source: "messages", filter: "body LIKE '%1' OR body LIKE '%4' OR body LIKE '%7'"),
            ])])
            let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .init(keepSourceTables: true))
            let counter = VMStepCounter(granularity: 100)
            try db.pool.writeWithoutTransaction { $0.setVMStepCounter(counter) }
            // A budget no batch reaches: batch sizes then do not depend on the machine's speed.
            var moved = 0
            while let report = try db.step(budget: .seconds(10)), report.kind == .move { moved += report.rowsMoved }
            try db.pool.writeWithoutTransaction { $0.setVMStepCounter(nil) }
            #expect(abs(moved - rows * 3 / 10) <= 1)
            return counter.ticks
        }
        let small = try work(rows: 3_000)
        let large = try work(rows: 30_000)
        let ratio = Double(large) / Double(small)
        #expect(ratio > 5 && ratio < 15, "work grew \(ratio)x for 10x the rows (\(small) -> \(large) ticks)")
    }

    /// Cancelling the task of `migrateAll()` stops it between batches with `CancellationError`;
    /// nothing is lost and the next call finishes the job. (Its steps go on while no app write
    /// waits: a cancellation asks the running one to hand over after its batch, which commits.)
    @Test(arguments: [nil, Duration.seconds(60)])
    func cancellingMigrateAllStopsBetweenBatches(yieldingLimit: Duration?) async throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 100_000)
        let plan = MigrationPlan.messages(from: legacy)
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .init(yieldingStepLimit: yieldingLimit))
        let events = db.events()
        let running = Mutex<Task<Int64, any Error>?>(nil)
        if yieldingLimit != nil {
            // Cancelled in the middle of a step that goes on moving (after its first batch).
            db.runner.contention.onQuietCheck.withLock { $0 = { running.withLock { $0 }?.cancel() } }
        }
        running.withLock { $0 = Task { try await db.migrateAll(budget: .milliseconds(1)) } }
        if yieldingLimit == nil {
            for await event in events { if case .batch = event { break } }
            running.withLock { $0 }?.cancel()
        }
        let task = try #require(running.withLock { $0 })
        await #expect(throws: CancellationError.self) { try await task.value }
        db.runner.contention.onQuietCheck.withLock { $0 = nil }
        let movedSoFar = try db.progress().rowsMoved
        #expect(movedSoFar > 0 && movedSoFar < 100_000)
        #expect(try await db.migrateAll() == 100_000 - movedSoFar)
        #expect(try await db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 100_000)
    }
}

/// Catalogs written by earlier versions keep working.
@Suite(.timeLimit(.minutes(2))) struct CatalogCompatibilityTests {
    /// A catalog without the `column_feeds` column (before column feeds existed) opens, migrates,
    /// and gains the column at the next registration.
    @Test func catalogWithoutColumnFeedsOpensAndUpgrades() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 500)
        let app = box.path("app.db")
        let plan = MigrationPlan.messages(from: legacy)
        do {
            let db = try FerryDatabase(path: app, plan: plan)
            try db.step(budget: .milliseconds(1))
            db.close()
        }
        try Connection(path: app).execute("ALTER TABLE ferry_migration_tables DROP COLUMN column_feeds")
        let db = try FerryDatabase(path: app)
        #expect(try db.progress().tables.map(\.name) == ["messages"])
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 500)
        try db.register(MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [
            TableMapping(target: "messages", source: "messages"),
        ])]))
        let columns = try db.pool.read { try $0.fetchAll("PRAGMA table_info(ferry_migration_tables)").map { try $0.get(1, as: String.self) } }
        #expect(columns.contains("column_feeds"))
        try db.migrateAllBlocking()
        #expect(try db.isMigrated)
    }

    /// Rows an app write moved ahead of the stepper count as moved, in progress and at the end: moved
    /// and left add up to the rows to move at every step, and every moved row is deleted from the
    /// source, filtered (the recorded path) or not.
    @Test(arguments: [nil, "conversation_id <> 1"] as [String?])
    func rowsMovedAheadCountAsMoved(filter: String?) throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 60)
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [TableMapping(target: "messages", source: "messages", filter: filter)])])
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .fixedBatches(of: 7))
        defer { db.close() }
        let total = Int64(filter == nil ? 60 : 40)
        try db.write { try $0.execute("UPDATE messages SET body = 'edited' WHERE id IN (30, 60)") }
        var table = try #require(try db.progress(countingRowsLeft: true).tables.first)
        #expect(table.rowsMoved == 2, "the two rows the update moved ahead")
        #expect(table.rowsMoved + table.rowsLeft == total)
        // The step reports (what events and metrics count) add up too: each batch reports the rows
        // it moved and, apart, the rows moved ahead that it passed.
        var reported: Int64 = 0
        while try db.progress().tables.first?.state != .finished {
            let report = try #require(try db.step())
            reported += Int64(report.rowsMoved + report.rowsMovedAhead)
            #expect(report.tableFinished || reported + report.rowsLeft == total, "reported \(reported), left \(report.rowsLeft)")
            table = try #require(try db.progress(countingRowsLeft: true).tables.first)
            #expect(table.rowsMoved + table.rowsLeft == total, "moved \(table.rowsMoved), left \(table.rowsLeft)")
        }
        #expect(reported == total, "the batches' reports count every moved row once")
        var deleted = 0
        while let report = try db.step() { deleted += report.sourceRowsDeleted }
        #expect(try db.progress().tables.first?.rowsMoved == total)
        #expect(Int64(deleted) == total, "moved = deleted at the end")
    }
}
