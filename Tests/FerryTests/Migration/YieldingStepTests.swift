import FerryTestSupport
import FerrySQLite
import Foundation
import Synchronization
import Testing
@testable import Ferry

/// A step goes on moving batches in its transaction while the app leaves the writer alone, and
/// hands it over after the running batch once an app write waits (or when the app wrote within
/// the yielding limit, or the step may not yield). Batches of 10 rows, so what a step moves is
/// exact; the contention is driven by the test.
@Suite(.timeLimit(.minutes(2)))
struct YieldingStepTests {
    @Test func aStepGoesOnUntilTheAppWantsTheWriter() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 100)
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: legacy), options: .init(yieldingStepLimit: nil))
        defer { db.close() }
        let waiting = Mutex(0)  // writes waiting for the writer, as the step sees them
        let contention = WriterContention(waiting: { waiting.withLock { $0 } })
        let stepper = Stepper(engine: db.engine, fixedBatchRows: 10, yieldingLimit: .seconds(3600), contention: contention)
        func step(yielding: Bool = true) throws -> StepReport? {
            try db.pool.writeWithoutTransaction { db throws(FerryError) in try stepper.step(on: db, budget: .milliseconds(10), yielding: yielding) }
        }

        // A write starts waiting after the third batch: the step commits the three and hands over.
        let checks = Mutex(0)
        contention.onQuietCheck.withLock { $0 = { if checks.withLock({ $0 += 1; return $0 }) == 3 { waiting.withLock { $0 = 1 } } } }
        #expect(try step()?.rowsMoved == 30)
        contention.onQuietCheck.withLock { $0 = nil }
        waiting.withLock { $0 = 0 }
        // A step that may not yield (the paced schedule's): one batch.
        #expect(try step(yielding: false)?.rowsMoved == 10)
        // The app wrote just now (within the yielding limit): one batch.
        contention.noteAppWrite()
        #expect(try step()?.rowsMoved == 10)
        // A cancelled run asks for the writer back: one batch.
        let quiet = WriterContention(waiting: { 0 })
        let unhurried = Stepper(engine: db.engine, fixedBatchRows: 10, yieldingLimit: .seconds(3600), contention: quiet)
        quiet.onQuietCheck.withLock { $0 = { quiet.requestHandover() } }
        #expect(try db.pool.writeWithoutTransaction { db throws(FerryError) in try unhurried.step(on: db, budget: .milliseconds(10)) }?.rowsMoved == 10)
        quiet.onQuietCheck.withLock { $0 = nil }
        // Nobody wants the writer: the rest, and the end of the table, in one step (one transaction).
        let last = try #require(try db.pool.writeWithoutTransaction { db throws(FerryError) in try unhurried.step(on: db, budget: .milliseconds(10)) })
        #expect(last.rowsMoved == 40 && last.tableFinished)
        #expect(try db.progress().tables.first?.rowsMoved == 100)
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 100)
        #expect(try db.verify().isConsistent)
    }

    /// Cleanup's chunks go on alike: a filtered source (chunked deletes) is cleaned in one step
    /// while nobody wants the writer, in one chunk per step when the app wrote recently; rowid and
    /// WITHOUT ROWID sources.
    @Test(arguments: [false, true])
    func cleanupGoesOnUntilTheAppWantsTheWriter(withoutRowid: Bool) throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 90, options: withoutRowid ? "WITHOUT ROWID" : "")
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [
            TableMapping(target: "messages", source: "messages", filter: "conversation_id <> 2"),
        ])])
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .init(yieldingStepLimit: nil))
        defer { db.close() }
        let contention = WriterContention(waiting: { 0 })
        let stepper = Stepper(engine: db.engine, fixedBatchRows: 10, yieldingLimit: .seconds(3600), contention: contention)
        func step() throws -> StepReport? {
            try db.pool.writeWithoutTransaction { db throws(FerryError) in try stepper.step(on: db, budget: .milliseconds(10)) }
        }
        // Moves 60 rows and finishes in one step.
        #expect(try step()?.tableFinished == true)
        // The count, every chunk, and the mark that the source is clean, in one step.
        let cleanup = try #require(try step())
        #expect(cleanup.sourceRowsDeleted == 60 && cleanup.sourceCleaned)
        #expect(try step() == nil)
        #expect(try db.progress().tables.first?.state == .finished)
        let left = try Connection(path: legacy)
        defer { left.close() }
        #expect(try left.scalar("SELECT count(*) FROM messages", as: Int.self) == 30)  // conversation 2 stays
        #expect(try left.scalar("SELECT count(*) FROM messages WHERE conversation_id <> 2", as: Int.self) == 0)
    }

    @Test func aRecentAppWriteKeepsCleanupToOneChunk() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 90)
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [
            TableMapping(target: "messages", source: "messages", filter: "conversation_id <> 2"),
        ])])
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .init(yieldingStepLimit: nil))
        defer { db.close() }
        while try db.progress().tables.first?.state != .finished { try db.step() }  // moved by one-batch steps
        let contention = WriterContention(waiting: { 0 })
        contention.noteAppWrite()
        let stepper = Stepper(engine: db.engine, fixedBatchRows: 10, yieldingLimit: .seconds(3600), contention: contention)
        let report = try #require(try db.pool.writeWithoutTransaction { db throws(FerryError) in try stepper.step(on: db, budget: .milliseconds(10)) })
        #expect(report.kind == .cleanup && report.sourceRowsDeleted == 10)  // the count, then one chunk
    }

    /// The pool counts the writes that wait for its writer while another one runs.
    @Test func thePoolCountsWaitingWrites() throws {
        let box = Sandbox()
        let pool = try DatabasePool(path: box.path("pool.db"))
        defer { pool.close() }
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let first = Thread { try? pool.writeWithoutTransaction { _ in holding.signal(); release.wait() } }
        first.start()
        holding.wait()
        #expect(pool.writesWaiting == 0)
        let done = DispatchSemaphore(value: 0)
        let second = Thread { try? pool.writeWithoutTransaction { _ in }; done.signal() }
        second.start()
        var waited = 0
        while pool.writesWaiting == 0 && waited < 5_000 { Thread.sleep(forTimeInterval: 0.001); waited += 1 }
        #expect(pool.writesWaiting == 1)
        release.signal()
        done.wait()
        #expect(pool.writesWaiting == 0)
    }

    /// While the app writes, a step's batch runs in pieces (a quarter each), and the step commits
    /// after the piece during which an app write began to wait; nobody waiting, the pieces add up
    /// to one batch, never more. Also when steps do not go on moving (no yielding limit), and for
    /// a step that waited for a checkpoint first (a smaller batch, in pieces too).
    @Test(arguments: [Duration.seconds(3600), nil])
    func whileTheAppWritesABatchRunsInPiecesAndHandsOverAfterOne(yieldingLimit: Duration?) throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 2000)
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: legacy), options: .init(yieldingStepLimit: nil))
        defer { db.close() }
        let waiting = Mutex(0)
        let contention = WriterContention(waiting: { waiting.withLock { $0 } })
        let stepper = Stepper(engine: db.engine, yieldingLimit: yieldingLimit, contention: contention)
        func step(spent: Duration = .zero) throws -> Int? {
            try db.pool.writeWithoutTransaction { db throws(FerryError) in try stepper.step(on: db, budget: .seconds(10), spent: spent)?.rowsMoved }
        }
        let pieceChecks = Mutex(0)
        contention.onQuietCheck.withLock { $0 = { pieceChecks.withLock { $0 += 1 } } }
        contention.noteAppWrite()
        // Nobody waits: four pieces of 25, one batch of 100 in all (three checks between them).
        stepper.batchSizes[.move, table: "messages"] = 100
        #expect(try step() == 100)
        #expect(pieceChecks.withLock { $0 } == 3)
        // A write begins to wait during the second piece: two pieces, then the commit.
        stepper.batchSizes[.move, table: "messages"] = 100
        pieceChecks.withLock { $0 = 0 }
        contention.onQuietCheck.withLock { $0 = { if pieceChecks.withLock({ $0 += 1; return $0 }) == 2 { waiting.withLock { $0 = 1 } } } }
        #expect(try step() == 50)
        waiting.withLock { $0 = 0 }
        contention.onQuietCheck.withLock { $0 = nil }
        // Half the budget spent waiting for a checkpoint: a batch of 50, in pieces of 13 (and the rest).
        stepper.batchSizes[.move, table: "messages"] = 100
        #expect(try step(spent: .seconds(5)) == 50)
        // The app quiet (no write within the window), with a yielding limit: batch after batch
        // in one step, no pieces; without one: one whole batch.
        let quiet = WriterContention(waiting: { 0 })
        let unhurried = Stepper(engine: db.engine, yieldingLimit: yieldingLimit, contention: quiet)
        unhurried.batchSizes[.move, table: "messages"] = 100
        let moved = try db.pool.writeWithoutTransaction { db throws(FerryError) in try unhurried.step(on: db, budget: .seconds(10))?.rowsMoved }
        #expect(yieldingLimit == nil ? moved == 100 : moved == 2000 - 200)
        #expect(try db.verify().isConsistent)
    }

    /// A step that waited for a checkpoint before it could write moves a first batch smaller by the
    /// share of the budget it waited (at most by four fifths), so that the step as a whole keeps
    /// within its budget; the batch size the budget adapter learned is not shrunk by it.
    @Test func aStepThatWaitedForACheckpointMovesASmallerFirstBatch() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 1000)
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: legacy), options: .init(yieldingStepLimit: nil))
        defer { db.close() }
        let stepper = Stepper(engine: db.engine)
        stepper.batchSizes[.move, table: "messages"] = 100
        func step(spent: Duration) throws -> Int? {
            try db.pool.writeWithoutTransaction { db throws(FerryError) in
                try stepper.step(on: db, budget: .seconds(10), spent: spent, yielding: false)?.rowsMoved
            }
        }
        #expect(try step(spent: .seconds(5)) == 50)
        #expect(stepper.batchSizes[.move, table: "messages"] == 200)  // grown from 100, not from 50
        #expect(try step(spent: .milliseconds(9900)) == 40)
        #expect(try step(spent: .zero) == 400)
    }
}
