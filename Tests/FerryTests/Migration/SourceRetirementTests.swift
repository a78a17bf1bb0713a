import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// Cleanup of a source table every row of which moved (no filter, no other mapping reading it):
/// the table is retired in one statement (dropped, or emptied when source tables are kept) after
/// the usual count, in one step that reports every row deleted. A row above the cursor (written
/// into the source after the migration finished) keeps the row-by-row path, and survives.
@Suite(.timeLimit(.minutes(2)))
struct SourceRetirementTests {
    /// Steps until the table finished, then returns the cleanup steps' reports.
    private func cleanupReports(_ db: FerryDatabase) throws -> [StepReport] {
        while try db.progress().tables.first?.state != .finished { try db.step() }
        var reports: [StepReport] = []
        while let report = try db.step() { reports.append(report) }
        return reports.filter { $0.kind == .cleanup }
    }

    /// 40,000 rows: the count before cleanup spans two steps (`Stepper.fixedCountRows`), and the
    /// retirement still comes after it. A source `WITHOUT ROWID` is retired alike.
    @Test(arguments: [false, true], [false, true])
    func anUnfilteredSourceIsRetiredInOneStatement(keepingSourceTables: Bool, withoutRowid: Bool) throws {
        let box = Sandbox()
        let rows = 40_000
        let legacy = try box.makeLegacy(rows: rows, options: withoutRowid ? "WITHOUT ROWID" : "")
        var options = FerryDatabase.Options.fixedBatches(of: 5000)
        options.keepSourceTables = keepingSourceTables
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: legacy), options: options)
        defer { db.close() }
        let reports = try cleanupReports(db)
        // Chunks of 5000 rows would take eight steps; the retirement takes one (the count first).
        #expect(reports.map(\.sourceRowsDeleted).reduce(0, +) == rows)
        #expect(reports.filter { $0.sourceRowsDeleted > 0 }.count == 1)
        #expect(reports.count == 2)  // a counting step, then the count's end and the retirement
        #expect(reports.last?.sourceCleaned == true)
        let source = try Connection(path: legacy)
        let tables = try source.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'messages'", as: Int.self)
        #expect(tables == (keepingSourceTables ? 1 : 0))
        if keepingSourceTables { #expect(try source.scalar("SELECT count(*) FROM messages", as: Int.self) == 0) }
        #expect(try db.read { db throws(FerryError) in try db.fetchOne("SELECT count(*) FROM messages")?[0] } == .integer(Int64(rows)))
        #expect(try db.verify().isConsistent)
    }

    /// The retirement runs off the writer (`SourceRetirer`): while it runs, a step waits for it at
    /// most its budget and reports nothing done, and the app's writes go on; a later step reports
    /// the rows and marks the source cleaned. A source without rowid alike.
    @Test(arguments: [false, true])
    func theWriterIsFreeWhileASourceTableIsRetired(withoutRowid: Bool) throws {
        let box = Sandbox()
        let rows = 3000
        let legacy = try box.makeLegacy(rows: rows, options: withoutRowid ? "WITHOUT ROWID" : "")
        let db = try FerryDatabase(path: box.path("app.db"), plan: .messages(from: legacy), options: .init(yieldingStepLimit: nil))
        defer { db.close() }
        while try db.progress().tables.first?.state != .finished { try db.step() }
        let release = DispatchSemaphore(value: 0)
        db.retirer.enqueue { release.wait() }  // holds the retirement back
        defer { release.signal() }  // before `db.close()`, which waits for the retirer
        var reports: [StepReport] = []
        for _ in 0..<20 {  // the count, then the retirement, which cannot start
            guard let report = try db.step(budget: .milliseconds(5)) else { break }
            reports.append(report)
            if db.retirer.hasJob(for: "messages") { break }
        }
        #expect(db.retirer.hasJob(for: "messages"))
        #expect(reports.allSatisfy { $0.sourceRowsDeleted == 0 && !$0.sourceCleaned })
        let waiting = try #require(try db.step(budget: .milliseconds(5)))
        #expect(waiting.kind == .cleanup && waiting.sourceRowsDeleted == 0 && !waiting.sourceCleaned)
        #expect(waiting.elapsed < .seconds(1))
        try db.write { try $0.execute("INSERT INTO messages(id, conversation_id, body) VALUES (100000, 1, 'meanwhile')") }
        release.signal()
        var deleted = 0
        var cleaned = false
        while let report = try db.step() {
            deleted += report.sourceRowsDeleted
            cleaned = cleaned || report.sourceCleaned
        }
        #expect(deleted == rows && cleaned)
        let source = try Connection(path: legacy)
        #expect(try source.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'messages'", as: Int.self) == 0)
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == rows + 1)
        #expect(try db.verify().isConsistent)
    }

    /// A move step writes the target alone: another connection holding a source file's write lock
    /// (the retirement of another table of that file, or another process) does not hold it up.
    /// Cleanup, which writes the source, waits for the lock as before.
    @Test(arguments: [false, true], SQLiteEngine.supportsEncryption ? [false, true] : [false])
    func aMoveStepDoesNotWaitForAWriterOfTheSourceFile(withoutRowid: Bool, encrypted: Bool) throws {
        let box = Sandbox()
        let cipher: Cipher? = encrypted ? .passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
        let legacy = try box.makeLegacy(rows: 1000, cipher: cipher, options: withoutRowid ? "WITHOUT ROWID" : "")
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), cipher: cipher, tables: [TableMapping(target: "messages", source: "messages")])])
        let db = try FerryDatabase(path: box.path("app.db"), configuration: .init(cipher: cipher, busyTimeout: .seconds(2)),
                                   plan: plan, options: .fixedBatches(of: 400))
        defer { db.close() }
        let writer = try Connection(path: legacy, configuration: .init(cipher: cipher))
        try writer.execute("BEGIN IMMEDIATE; CREATE TABLE elsewhere(x)")  // holds the source file's write lock
        let start = ContinuousClock.now
        let first = try #require(try db.step())
        let second = try #require(try db.step())
        #expect(first.rowsMoved == 400 && second.rowsMoved == 400)
        #expect(ContinuousClock.now - start < .seconds(1))
        // The app writes meanwhile, and reads every row.
        try db.write { try $0.execute("INSERT INTO messages(id, conversation_id, body) VALUES (5000, 1, 'meanwhile')") }
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 1001)
        try writer.execute("ROLLBACK")
        try db.migrateAllBlocking()
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 1001)
        #expect(try db.verify().isConsistent)
    }

    /// A retirement that meets another connection holding the source file's write lock for longer
    /// than the busy timeout tries again instead of failing the step: the source is retired once
    /// the lock is gone, and no step throws.
    @Test(arguments: SQLiteEngine.supportsEncryption ? [false, true] : [false])
    func aRetirementWaitsOutAWriterOfTheSourceFile(encrypted: Bool) throws {
        let box = Sandbox()
        let cipher: Cipher? = encrypted ? .passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
        let legacy = try box.makeLegacy(rows: 1000, cipher: cipher)
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), cipher: cipher, tables: [TableMapping(target: "messages", source: "messages")])])
        let db = try FerryDatabase(path: box.path("app.db"), configuration: .init(cipher: cipher, busyTimeout: .milliseconds(100)),
                                   plan: plan, options: .fixedBatches(of: 5000))
        defer { db.close() }
        while try db.progress().tables.first?.state != .finished { try db.step() }
        // Another connection holds the source file's write lock for 800 ms, eight busy timeouts.
        let (locked, released) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        Thread {
            defer { released.signal() }
            guard let writer = try? Connection(path: legacy, configuration: .init(cipher: cipher)) else { locked.signal(); return }
            try? writer.execute("BEGIN IMMEDIATE; CREATE TABLE elsewhere(x)")
            locked.signal()
            Thread.sleep(forTimeInterval: 0.8)
            try? writer.execute("ROLLBACK")
            writer.close()
        }.start()
        locked.wait()
        var steps = 0
        while try db.step() != nil { steps += 1 }
        #expect(steps >= 1)
        released.wait()
        let source = try Connection(path: legacy, configuration: .init(cipher: cipher))
        #expect(try source.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'messages'", as: Int.self) == 0)
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 1000)
        #expect(try db.verify().isConsistent)
    }

    /// Off the writer (a source of its own file) and on it (a source in the target file), the
    /// retirement declines and cleanup deletes the moved rows one chunk at a time.
    @Test(arguments: [false, true])
    func aRowAboveTheCursorKeepsTheRowByRowPathAndSurvives(sameFile: Bool) throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 1000, name: sameFile ? "app.db" : "legacy.db", table: sameFile ? "legacy_messages" : "messages")
        let plan = sameFile
            ? MigrationPlan(sources: [MigrationSource(.targetFile, tables: [TableMapping(target: "messages", source: "legacy_messages")])])
            : MigrationPlan.messages(from: legacy)
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .fixedBatches(of: 500))
        defer { db.close() }
        while try db.progress().tables.first?.state != .finished { try db.step() }
        // Someone writes the legacy table behind Ferry's back after the table finished.
        let source = sameFile ? "legacy_messages" : "messages"
        let writer = try Connection(path: legacy)
        try writer.execute("INSERT INTO \(source)(id, conversation_id, body) VALUES (5000, 1, 'late')")
        writer.close()
        var deleted = 0
        while let report = try db.step() { deleted += report.sourceRowsDeleted }
        #expect(deleted == 1000)
        let left = try Connection(path: legacy)
        #expect(try left.scalar("SELECT group_concat(id) FROM \(source)", as: String.self) == "5000")
    }

    /// A source table in the target file is dropped on the writer, where every app write would wait
    /// for the drop (its cost grows with the table): larger than one cleanup chunk, it is deleted in
    /// chunks of the budget's size and dropped once empty, so no cleanup step holds the writer for
    /// longer than a chunk. Rowid and `WITHOUT ROWID` sources alike.
    @Test(arguments: [false, true])
    func aLargeSameFileSourceIsDeletedInChunksThenDropped(withoutRowid: Bool) throws {
        let box = Sandbox()
        let rows = 300
        _ = try box.makeLegacy(rows: rows, name: "app.db", table: "old_messages", options: withoutRowid ? "WITHOUT ROWID" : "")
        let plan = MigrationPlan(sources: [MigrationSource(.targetFile, tables: [TableMapping(target: "messages", source: "old_messages")])])
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .fixedBatches(of: 50))
        defer { db.close() }
        let reports = try cleanupReports(db)
        #expect(reports.allSatisfy { $0.sourceRowsDeleted <= 50 }, "\(reports.map(\.sourceRowsDeleted))")
        #expect(reports.reduce(0) { $0 + $1.sourceRowsDeleted } == rows)
        #expect(reports.last?.sourceCleaned == true)
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == rows)
        let raw = try Connection(path: box.path("app.db"))
        defer { raw.close() }
        #expect(try raw.tableExists("old_messages") == false, "dropped once empty")
    }

    /// A small same-file source (within one chunk) is still retired in one statement.
    @Test func aSmallSameFileSourceIsRetiredInOneStatement() throws {
        let box = Sandbox()
        _ = try box.makeLegacy(rows: 40, name: "app.db", table: "old_messages")
        let plan = MigrationPlan(sources: [MigrationSource(.targetFile, tables: [TableMapping(target: "messages", source: "old_messages")])])
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .fixedBatches(of: 50))
        defer { db.close() }
        let reports = try cleanupReports(db)
        #expect(reports.contains { $0.sourceRowsDeleted == 40 && $0.sourceCleaned })
    }
}
