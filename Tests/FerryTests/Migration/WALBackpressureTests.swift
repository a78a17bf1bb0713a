import FerryTestSupport
import FerrySQLite
import Foundation
import Synchronization
import Testing
@_spi(Benchmarks) @testable import Ferry

/// Steps that follow each other with no gap must not let a WAL grow by the whole migration: over
/// `walSizeLimit` a step waits for a checkpoint, and its transaction restarts the log.
@Suite(.timeLimit(.minutes(3))) struct WALBackpressureTests {
    /// A source whose rows scatter over the pages of an index (a messenger's `(conversation, time)`),
    /// so every batch dirties most index pages: WAL volume far above the data's size.
    private func makeScatteredSource(_ box: Sandbox, rows: Int) throws -> String {
        let path = box.path("legacy.db")
        let db = try Connection(path: path)
        try db.execute("CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, body TEXT)")
        try db.execute("CREATE INDEX messages_conversation ON messages(conversation_id, id)")
        try db.execute("""
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?)
            INSERT INTO messages SELECT x, x % 2000, hex(randomblob(60)) FROM n
            """, [.integer(Int64(rows))])
        db.close()
        return path
    }

    private func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0
    }

    /// Migrates a 40,000-row scattered source in 500-row batches with no background checkpoints
    /// (a checkpointer that cannot keep up) and returns the largest WAL sizes seen after a step.
    /// - Parameter filter: a filter matching every row, so that cleanup deletes in chunks (without
    ///   one, every row moved and cleanup drops the source table in one statement).
    private func migrate(walSizeLimit: Int, filter: String? = "conversation_id >= 0") throws -> (target: Int, source: Int, waits: Int) {
        let box = Sandbox(preferringMemory: true)
        let rows = 40_000
        let legacy = try makeScatteredSource(box, rows: rows)
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [TableMapping(target: "messages", source: "messages", filter: filter)])])
        var options = FerryDatabase.Options(walSizeLimit: walSizeLimit)
        options.fixedBatchRows = 500
        let target = box.path("app.db")
        let db = try FerryDatabase(path: target, plan: plan, options: options)
        db.checkpointer.backgroundCheckpointsEnabled = false
        var largest = (target: 0, source: 0)
        while try db.step() != nil {
            largest.target = max(largest.target, size(target + "-wal"))
            largest.source = max(largest.source, size(legacy + "-wal"))
        }
        let waits = db.checkpointer.backpressureCount
        let moved = try db.pool.read { try $0.scalar("SELECT count(*) FROM main.messages", as: Int.self) }
        db.close()
        #expect(moved == rows)
        return (largest.target, largest.source, waits)
    }

    @Test func walFilesStayNearTheLimitWhileStepsFollowEachOther() throws {
        let limit = 2 << 20
        // The bound: the limit plus what one batch writes after the check (its 500 rows' table pages
        // and at most every index page: well under 1.5 MB here).
        let bound = limit + (3 << 19)
        let unbounded = try migrate(walSizeLimit: 1 << 30)
        #expect(unbounded.waits == 0)
        #expect(unbounded.target > 3 * bound, "without backpressure the target's WAL takes every batch")
        #expect(unbounded.source > 2 * bound, "and the source's every cleanup chunk")

        let bounded = try migrate(walSizeLimit: limit)
        #expect(bounded.waits > 0)
        #expect(bounded.target <= bound, "target WAL peaked at \(bounded.target) bytes")
        #expect(bounded.source <= bound, "source WAL peaked at \(bounded.source) bytes (cleanup)")

        // Without a filter the source table is dropped in one statement: its WAL stays below the
        // chunks' (a SQLite built with SQLITE_SECURE_DELETE, as Debian's is, zeroes every freed
        // page, and the drop writes each once; without it the drop writes a few pages).
        let dropped = try migrate(walSizeLimit: 1 << 30, filter: nil)
        #expect(dropped.source < unbounded.source, "source WAL peaked at \(dropped.source) bytes (table dropped)")
    }

    @Test func aStepWaitsAtMostHalfItsBudgetAndWritesNothingUntilTheCheckpointEnds() throws {
        let box = Sandbox(preferringMemory: true)
        let legacy = try makeScatteredSource(box, rows: 20_000)
        let plan = MigrationPlan.messages(from: legacy)
        var options = FerryDatabase.Options(stepBudget: .milliseconds(30), walSizeLimit: 1 << 20)
        options.fixedBatchRows = 500
        let target = box.path("app.db")
        let db = try FerryDatabase(path: target, plan: plan, options: options)
        defer { db.close() }
        db.checkpointer.backgroundCheckpointsEnabled = false
        // Move until the WAL is over the limit.
        var moved = 0
        while db.checkpointer.largestWALBytes <= 1 << 20 {
            let report = try #require(try db.step())
            #expect(report.kind == .move)
            moved += report.rowsMoved
        }
        let walBefore = db.checkpointer.largestWALBytes
        // Hold the checkpointer's queue: the catch-up cannot run.
        let release = DispatchSemaphore(value: 0)
        db.checkpointer.enqueue { release.wait() }
        for _ in 0..<3 {
            let clock = ContinuousClock(), start = clock.now
            let report = try #require(try db.step())
            let elapsed = clock.now - start
            #expect(report.kind == .checkpoint && report.rowsMoved == 0 && report.table.isEmpty)
            #expect(elapsed >= .milliseconds(14) && elapsed < .seconds(2), "waited half its budget, not for the checkpoint")
        }
        #expect(db.checkpointer.backpressureCount == 1, "one catch-up, shared by the waiting steps")
        #expect(db.checkpointer.largestWALBytes == walBefore, "nothing written while waiting")
        #expect(try db.pool.read { try $0.scalar("SELECT count(*) FROM main.messages", as: Int.self) } == moved)
        release.signal()
        // The catch-up runs; the next step that writes restarts the log.
        var report = try #require(try db.step())
        while report.kind == .checkpoint { report = try #require(try db.step()) }
        #expect(report.kind == .move && report.rowsMoved == 500)
        #expect(db.checkpointer.largestWALBytes < walBefore / 2, "the log restarted")
        #expect(size(target + "-wal") <= (1 << 20) + (3 << 19))
    }

    /// A step waits for the catch-up on the writer, so that no app write slips in while the
    /// checkpoint runs (the log would then not restart, and the next step would wait again: with
    /// the app writing every 5 ms, two catch-ups in three ended so). An app write queued meanwhile
    /// runs once the step returns, as after a batch.
    @Test(arguments: [false, true]) func anAppWriteWaitsForAStepWaitingForTheCatchUp(async: Bool) async throws {
        let box = Sandbox(preferringMemory: true)
        let legacy = try makeScatteredSource(box, rows: 20_000)
        let limit = 2 << 20
        var options = FerryDatabase.Options(stepBudget: .seconds(2), walSizeLimit: limit)
        options.fixedBatchRows = 100
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: legacy), options: options)
        defer { db.close() }
        db.checkpointer.backgroundCheckpointsEnabled = false
        while db.checkpointer.largestWALBytes <= limit { _ = try #require(try await db.step()) }
        // Under twice the limit, where the app's writes wait for a catch-up of their own.
        try #require(db.checkpointer.largestWALBytes < 2 * limit)
        // Hold the checkpointer's queue: the catch-up cannot run, the step waits half its budget.
        let release = DispatchSemaphore(value: 0)
        db.checkpointer.enqueue { release.wait() }
        defer { release.signal() }
        let clock = ContinuousClock()
        let stepReport = Mutex<StepReport??>(nil)
        if async {
            Task.detached {
                let report = try? await db.step()
                stepReport.withLock { $0 = .some(report) }
            }
        } else {
            Thread {
                let report = try? db.step()
                stepReport.withLock { $0 = .some(report) }
            }.start()
        }
        // Polled without blocking a thread of the tasks' pool, which the async step needs.
        while db.checkpointer.backpressureCount == 0 { try await Task.sleep(for: .microseconds(200)) }  // the step waits now
        let waiting = clock.now
        try await db.write { db throws(FerryError) in try db.execute("DELETE FROM messages WHERE id = 1") }
        let written = clock.now
        while stepReport.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(1)) }
        #expect(stepReport.withLock { $0 }??.kind == .checkpoint)
        // The step holds the writer for 1 s (half its budget) from just before `waiting`; a write
        // that slipped in would take a millisecond.
        #expect(written - waiting >= .milliseconds(500), "the app's write ran while the step waited")
    }

    /// A step whose wait for the catch-up checkpoint ended within its timeout goes on to write, with
    /// a first batch smaller by the share of the budget it waited: the step as a whole keeps within
    /// its budget.
    @Test func aStepThatWaitedForTheCatchUpMovesASmallerBatch() throws {
        let box = Sandbox(preferringMemory: true)
        let legacy = try makeScatteredSource(box, rows: 40_000)
        let options = FerryDatabase.Options(stepBudget: .seconds(1), walSizeLimit: 1 << 20, yieldingStepLimit: nil)
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: legacy), options: options)
        defer { db.close() }
        db.checkpointer.backgroundCheckpointsEnabled = false
        while db.checkpointer.largestWALBytes <= 1 << 20 { _ = try #require(try db.step()) }
        let adapted = try #require(db.runner.stepper.batchSizes[.move, table: "messages"])
        // The catch-up can run 100 ms from now; the step waits for it (its timeout is 500 ms).
        let release = DispatchSemaphore(value: 0)
        db.checkpointer.enqueue { release.wait() }
        Thread { usleep(100_000); release.signal() }.start()  // a thread of its own: the global queues may all be busy
        let report = try #require(try db.step())
        #expect(report.kind == .move, "\(report)")
        #expect(report.rowsMoved < adapted && report.rowsMoved >= adapted / 2, "\(report.rowsMoved) rows of \(adapted)")
        #expect(db.checkpointer.backpressureCount == 1)
    }

    @Test func noStepWaitsUnderTheLimit() throws {
        let box = Sandbox(preferringMemory: true)
        let legacy = try box.makeLegacy(rows: 5000)
        let plan = MigrationPlan.messages(from: legacy)
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan)
        #expect(try db.migrateAllBlocking() == 5000)
        #expect(db.checkpointer.backpressureCount == 0)
        db.close()
    }

    @Test func asyncStepsWaitToo() async throws {
        let box = Sandbox(preferringMemory: true)
        let legacy = try makeScatteredSource(box, rows: 20_000)
        let plan = MigrationPlan.messages(from: legacy)
        var options = FerryDatabase.Options(walSizeLimit: 1 << 20)
        options.fixedBatchRows = 500
        let target = box.path("app.db")
        let db = try FerryDatabase(path: target, plan: plan, options: options)
        db.checkpointer.backgroundCheckpointsEnabled = false
        var largest = 0
        while try await db.step() != nil { largest = max(largest, size(target + "-wal")) }
        #expect(db.checkpointer.backpressureCount > 0)
        #expect(largest <= (1 << 20) + (3 << 19), "target WAL peaked at \(largest) bytes")
        db.close()
    }

    // MARK: The app's writes

    /// A database half-way through a 4,000-row migration (or after it), with background
    /// checkpoints as given, its path, and the sandbox that holds its files (kept while it is used).
    private func appWriteDatabase(walSizeLimit: Int, backgroundCheckpoints: Bool, finished: Bool) throws -> (FerryDatabase, String, Sandbox) {
        let box = Sandbox(preferringMemory: true)
        let legacy = try box.makeLegacy(rows: 4000)
        var options = FerryDatabase.Options(walSizeLimit: walSizeLimit)
        options.fixedBatchRows = 2000
        let target = box.path("app.db")
        let db = try FerryDatabase(path: target, plan: .messages(from: legacy), options: options)
        if finished { try db.migrateAllBlocking() } else { _ = try db.step() }
        db.checkpointer.backgroundCheckpointsEnabled = backgroundCheckpoints
        return (db, target, box)
    }

    private static let insert = "INSERT INTO messages(conversation_id, body) VALUES (?, ?)"
    private static func arguments(_ index: Int) -> StatementArguments { [.integer(Int64(index % 7)), .text("app row \(index)")] }

    /// Writes `count` single-row inserts one after the other, each in its own `write { }`, and
    /// returns the largest WAL size seen and the backpressure waits.
    private func appWrites(_ count: Int, walSizeLimit: Int, backgroundCheckpoints: Bool, finished: Bool) throws -> (largest: Int, waits: Int) {
        let (db, target, box) = try appWriteDatabase(walSizeLimit: walSizeLimit, backgroundCheckpoints: backgroundCheckpoints, finished: finished)
        defer { db.close(); withExtendedLifetime(box) {} }
        let waitsBefore = db.checkpointer.backpressureCount
        var largest = 0
        for index in 0..<count {
            try db.write { db throws(FerryError) in try db.execute(Self.insert, Self.arguments(index)) }
            if index % 50 == 0 { largest = max(largest, size(target + "-wal")) }
        }
        largest = max(largest, size(target + "-wal"))
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 4000 + count)
        return (largest, db.checkpointer.backpressureCount - waitsBefore)
    }

    /// An app that writes without a pause never leaves the background checkpoints the moment
    /// SQLite needs to restart the log (every frame copied when a write begins): without
    /// backpressure its WAL took every write (350 MB in 2 s of single-row inserts, migrating or
    /// not). Over twice the limit an app write waits for a catch-up checkpoint, as a step does
    /// over the limit.
    @Test(arguments: [false, true]) func appWritesWithoutAPauseKeepTheWALNearTheLimit(finished: Bool) throws {
        // Twice the limit plus what the writes between a check and the catch-up's end add (a few
        // pages each).
        let bound = 2 * Self.appLimit + (1 << 19)
        let unbounded = try appWrites(3000, walSizeLimit: 1 << 30, backgroundCheckpoints: false, finished: finished)
        #expect(unbounded.waits == 0)
        #expect(unbounded.largest > 3 * bound, "without backpressure the WAL takes every write (\(unbounded.largest) bytes)")
        for background in [true, false] {
            let bounded = try appWrites(3000, walSizeLimit: Self.appLimit, backgroundCheckpoints: background, finished: finished)
            // With background checkpoints the log sometimes restarts by itself, in a gap between
            // two writes; without them nothing but the waits copies a frame.
            #expect(background || bounded.waits > 0)
            #expect(bounded.largest <= bound, "WAL peaked at \(bounded.largest) bytes (background checkpoints: \(background))")
        }
    }

    private static let appLimit = 1 << 20

    /// A reader holding an old snapshot keeps the log from restarting: a catch-up then cannot copy
    /// the frames after it, and waiting for one before every write would cost each write a
    /// checkpoint (four times as long, measured). The app's writes wait once per limit of log
    /// instead, and at twice the limit again once the reader lets go and the log restarts.
    @Test func aReaderHoldingASnapshotCostsAWaitPerLimitOfLogNotPerWrite() throws {
        let (db, target, box) = try appWriteDatabase(walSizeLimit: Self.appLimit, backgroundCheckpoints: true, finished: true)
        defer { db.close(); withExtendedLifetime(box) {} }
        let reader = try Connection(path: target)
        defer { reader.close() }
        try reader.execute("BEGIN")
        _ = try reader.fetchAll("SELECT count(*) FROM messages")
        let waitsBefore = db.checkpointer.backpressureCount
        for index in 0..<3000 { try db.write { db throws(FerryError) in try db.execute(Self.insert, Self.arguments(index)) } }
        let grown = db.checkpointer.largestWALBytes
        let waits = db.checkpointer.backpressureCount - waitsBefore
        #expect(grown > 8 * Self.appLimit, "the reader kept the log from restarting (\(grown) bytes)")
        // About one wait per limit of growth past twice the limit (each write adds a few pages).
        #expect(waits > 0 && waits <= grown / Self.appLimit + 2, "\(waits) waits for a log of \(grown) bytes")
        try reader.execute("COMMIT")
        for index in 0..<3000 { try db.write { db throws(FerryError) in try db.execute(Self.insert, Self.arguments(index)) } }
        #expect(db.checkpointer.largestWALBytes <= 2 * Self.appLimit + (1 << 19), "the log restarted once the reader let go")
    }

    /// The async `write { }` waits the same way (no background checkpoints: only the waits copy).
    @Test func asyncAppWritesWaitToo() async throws {
        let (db, target, box) = try appWriteDatabase(walSizeLimit: Self.appLimit, backgroundCheckpoints: false, finished: false)
        defer { db.close(); withExtendedLifetime(box) {} }
        var largest = 0
        for index in 0..<3000 {
            try await db.write { db throws(FerryError) in try db.execute(Self.insert, Self.arguments(index)) }
            if index % 50 == 0 { largest = max(largest, size(target + "-wal")) }
        }
        #expect(db.checkpointer.backpressureCount > 0)
        // The bound holds while each catch-up ends within the write's wait; on a loaded machine a
        // wait may time out, and the write goes on (the log then grows past the bound meanwhile).
        #expect(largest <= 2 * Self.appLimit + (1 << 19) || db.checkpointer.backpressureTimeouts > 0,
                "WAL peaked at \(largest) bytes with no wait timed out")
    }
}
