import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

@Suite(.timeLimit(.minutes(2))) struct StepperTests {
    @Test func movesEveryRowAndDropsTheSource() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 5000)
        let plan = MigrationPlan.messages(from: legacy)
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan)
        #expect(try db.isMigrated == false)
        let progressBefore = try db.progress()
        #expect(progressBefore.tables.first?.rowsLeft == 5000)
        #expect(progressBefore.tables.first?.state == .pending)
        let moved = try db.migrateAllBlocking()
        #expect(moved == 5000)
        #expect(try db.isMigrated)
        let rows = try db.pool.read { try messages($0) }
        #expect(rows.count == 5000)
        #expect(rows.first == [1, 1, "message 1"])
        #expect(rows.last == [5000, 2, "message 5000"])
        // Target created from the source's schema, index included.
        let indexes = try db.pool.read { try $0.fetchAll("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'messages'") }
        #expect(indexes.count == 1)
        db.close()
        let source = try Connection(path: legacy)
        #expect(try source.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'messages'", as: Int.self) == 0)
    }

    @Test func filteredMigrationLeavesOtherRowsAndKeepsSourceTable() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 3000)
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [
            TableMapping(target: "messages", source: "messages", filter: "conversation_id = 1"),
        ])])
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan)
        try db.migrateAllBlocking()
        let rows = try db.pool.read { try messages($0) }
        #expect(rows.count == 1000)
        #expect(rows.allSatisfy { $0[1] == 1 })
        db.close()
        let source = try Connection(path: legacy)
        #expect(try source.scalar("SELECT count(*) FROM messages", as: Int.self) == 2000)
        #expect(try source.scalar("SELECT count(*) FROM messages WHERE conversation_id = 1", as: Int.self) == 0)
    }

    @Test func splitsOneSourceTableAcrossTwoTargetsFirstMatchWins() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 3000)
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [
            TableMapping(target: "recent", source: "messages", filter: "id > 2000"),
            TableMapping(target: "rest", source: "messages", filter: "id > 1000"),  // overlaps: only 1001...2000 left for it
        ])])
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan)
        try db.migrateAllBlocking()
        let recent = try db.pool.read { try messages($0, table: "main.recent") }
        let rest = try db.pool.read { try messages($0, table: "main.rest") }
        #expect(recent.count == 1000 && recent.first?[0] == 2001)
        #expect(rest.count == 1000 && rest.first?[0] == 1001 && rest.last?[0] == 2000)
        db.close()
        #expect(try Connection(path: legacy).scalar("SELECT count(*) FROM messages", as: Int.self) == 1000)
    }

    @Test func sameFileReshapeIntoExistingTargetWithDefaults() throws {
        let box = Sandbox()
        let path = try box.makeLegacy(rows: 500, name: "app.db", table: "messages_v1")
        do {
            let db = try Connection(path: path)
            try db.execute("CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, body TEXT, starred INTEGER NOT NULL DEFAULT 0)")
        }
        let plan = MigrationPlan(sources: [MigrationSource(.targetFile, tables: [TableMapping(target: "messages", source: "messages_v1")])])
        let db = try FerryDatabase(path: path, plan: plan)
        try db.migrateAllBlocking()
        let starred = try db.pool.read { try $0.fetchAll("SELECT count(*), sum(starred) FROM messages") }
        #expect(starred.first?.values == [500, 0])
        #expect(try db.pool.read { try $0.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'messages_v1'", as: Int.self) } == 0)
    }

    @Test func incompatibleTargetIsRejectedWithPreciseProblems() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 10)
        let app = box.path("app.db")
        try Connection(path: app).execute("CREATE TABLE messages(id INTEGER PRIMARY KEY, title TEXT NOT NULL)")
        let plan = MigrationPlan.messages(from: legacy)
        #expect {
            try FerryDatabase(path: app, plan: plan)
        } throws: { error in
            guard case FerryError.schemaMismatch(let table, let problems) = error else { return false }
            // Each problem once: the NOT NULL column nothing feeds, and each source column that
            // would be lost.
            return table == "messages" && problems.count == 3 && problems.contains { $0.contains("title") }
                && problems.contains { $0.contains("conversation_id") } && problems.contains { $0.contains("body") }
        }
        // Nothing was registered, not even an empty catalog.
        #expect(try Connection(path: app).scalar("SELECT count(*) FROM sqlite_master WHERE name LIKE 'ferry_%'", as: Int.self) == 0)
        let fresh = try FerryDatabase(path: app)
        #expect(try fresh.progress().tables.isEmpty)
    }

    @Test func planRegistrationIsIdempotentAndConflictsAreRejected() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 100)
        let plan = MigrationPlan.messages(from: legacy)
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan)
        try db.step()
        try db.register(plan)  // same plan: nothing changes
        #expect(try db.progress().tables.count == 1)
        let conflicting = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [
            TableMapping(target: "messages", source: "messages", filter: "id > 5"),
        ])])
        #expect(throws: FerryError.self) { try db.register(conflicting) }
        let twice = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [
            TableMapping(target: "a", source: "messages", filter: "id < 5"), TableMapping(target: "a", source: "messages", filter: "id > 5"),
        ])])
        #expect(throws: FerryError.invalidPlan("the plan names target a twice")) { try db.register(twice) }
    }

    @Test func injectionInFilterIsRejected() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 10)
        for filter in ["1); DROP TABLE messages; --", "id > 0) OR (1", "id IN (SELECT id FROM messages)", "id = ?", "no_such_column = 1", "id >"] {
            let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [TableMapping(target: "m", source: "messages", filter: filter)])])
            #expect(performing: { try FerryDatabase(path: box.path("app.db"), plan: plan) }, throws: { error in
                if case FerryError.invalidFilter = error { return true }
                return false
            })
        }
        #expect(try Connection(path: legacy).scalar("SELECT count(*) FROM messages", as: Int.self) == 10)
    }

    @Test func autoincrementSequenceIsSeededFromTheSource() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 50, declaration: "id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id INTEGER NOT NULL, body TEXT")
        let plan = MigrationPlan.messages(from: legacy)
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan)
        #expect(try db.pool.read { try $0.scalar("SELECT seq FROM sqlite_sequence WHERE name = 'messages'", as: Int.self) } == 50)
    }

    @Test func conflictingRowsAreQuarantinedNotDropped() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 100, declaration: "id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, body TEXT UNIQUE")
        let app = box.path("app.db")
        do {
            let db = try Connection(path: app)
            try db.execute("CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, body TEXT UNIQUE)")
            try db.execute("INSERT INTO messages VALUES (1000, 9, 'message 42')")  // collides on body with source row 42
        }
        let plan = MigrationPlan.messages(from: legacy)
        let db = try FerryDatabase(path: app, plan: plan)
        try db.migrateAllBlocking()
        let count = try db.pool.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) }
        #expect(count == 100)  // 99 moved + the app's own row
        let quarantined = try db.pool.read { try $0.fetchAll("SELECT ferry_source_rowid, body FROM ferry_quarantine_messages") }
        #expect(quarantined.map(\.values) == [[42, "message 42"]])
        // Timed by SQLite's clock in UTC ISO-8601 text, as the catalog's and the schema log's times are.
        let timed = try db.pool.read { try $0.scalar("""
            SELECT count(*) FROM ferry_quarantine_messages AS q, ferry_migration_tables AS t
            WHERE q.ferry_quarantined_at BETWEEN t.registered_at AND t.finished_at
              AND q.ferry_quarantined_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'
              AND typeof(t.registered_at) = 'text' AND typeof(t.finished_at) = 'text'
            """, as: Int.self) }
        #expect(timed == 1)
        #expect(try db.progress().tables.first?.rowsQuarantined == 1)
        #expect(try db.isMigrated)
    }

    /// A batch copies set-based with `INSERT OR ROLLBACK`: a conflict rolls the step's whole
    /// transaction back (with yielding steps, the batches before it too), and the step runs again
    /// with copies that fall back to row by row. Conflicts in the second batch, the middle and the end of
    /// the table, with one batch per step and with yielding steps, from both kinds of source:
    /// every other row moves exactly once, and the conflicting ones are set aside.
    @Test(arguments: [false, true], [false, true])
    func conflictsInAnyBatchOfAStepAreQuarantinedAndTheRestMoves(withoutRowid: Bool, yielding: Bool) throws {
        let box = Sandbox()
        let declaration = "id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, body TEXT UNIQUE"
        let legacy = try box.makeLegacy(rows: 3000, declaration: declaration, options: withoutRowid ? "WITHOUT ROWID" : "")
        let app = box.path("app.db")
        let db = try FerryDatabase(path: app, plan: .messages(from: legacy), options: yielding ? .init() : .fixedBatches(of: 400))
        defer { db.close() }
        // Rows that collide on body with source rows 700, 1500 and 2999, written behind Ferry's
        // back (a raw connection: Ferry's own writes would move those source rows first).
        let raw = try Connection(path: app)
        for (id, body) in [(5001, 700), (5002, 1500), (5003, 2999)] {
            try raw.execute("INSERT INTO messages VALUES (?, 9, ?)", [.integer(Int64(id)), .text("message \(body)")])
        }
        raw.close()
        try db.migrateAllBlocking()
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 3000)  // 2997 moved + the app's 3
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages WHERE id <= 3000", as: Int.self) } == 2997)
        #expect(try db.pool.read { try $0.scalar("SELECT count(*) FROM ferry_quarantine_messages", as: Int.self) } == 3)
        #expect(try db.progress().tables.first?.rowsQuarantined == 3)
        #expect(try db.progress().tables.first?.rowsMoved == 2997)
        #expect(try db.isMigrated)
        #expect(try db.verify().isConsistent)
    }

    @Test func sourceIsOnlyReadWhileMigratingAndCleanedAfterwards() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 3000)
        let app = box.path("app.db")
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [
            TableMapping(target: "messages", source: "messages", filter: "conversation_id != 2"),
        ])])
        let sourceChanges = { () throws -> Int in
            try Connection(path: legacy).scalar("PRAGMA data_version", as: Int.self) ?? 0
        }
        let db = try FerryDatabase(path: app, plan: plan)
        let before = try Connection(path: legacy).scalar("SELECT count(*) FROM messages", as: Int.self)
        var report = try #require(try db.step())
        while !report.tableFinished {
            #expect(report.kind == .move)
            // Batches write only the target: the source still holds every row.
            #expect(try Connection(path: legacy).scalar("SELECT count(*) FROM messages", as: Int.self) == before)
            report = try #require(try db.step())
        }
        _ = try sourceChanges()
        // Cleanup steps now delete the moved rows, and only those.
        var deleted = 0
        while let cleanup = try db.step() {
            #expect(cleanup.kind == .cleanup)
            deleted += cleanup.sourceRowsDeleted
        }
        #expect(deleted == 2000)
        let source = try Connection(path: legacy)
        #expect(try source.scalar("SELECT count(*) FROM messages", as: Int.self) == 1000)
        #expect(try source.scalar("SELECT count(*) FROM messages WHERE conversation_id != 2", as: Int.self) == 0)
        #expect(try db.pool.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 2000)
    }

    @Test func interruptedCleanupResumesAfterReopen() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 5000)
        let app = box.path("app.db")
        let plan = MigrationPlan.messages(from: legacy)
        do {
            let db = try FerryDatabase(path: app, plan: plan)
            while let report = try db.step(), report.kind == .move {}
            // One cleanup chunk ran; the process "stops" here.
            db.close()
        }
        let db = try FerryDatabase(path: app, plan: plan)
        try db.migrateAllBlocking()
        #expect(try db.pool.read { try messages($0) }.count == 5000)
        db.close()
        #expect(try Connection(path: legacy).scalar("SELECT count(*) FROM sqlite_master WHERE name = 'messages'", as: Int.self) == 0)
    }

    @Test func notificationsFireExactlyOnceAcrossRestarts() async throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 200)
        let app = box.path("app.db")
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [
            TableMapping(target: "odd", source: "messages", filter: "id % 2 = 1"), TableMapping(target: "even", source: "messages"),
        ])])
        let recorder = EventRecorder()
        do {
            let db = try FerryDatabase(path: app, plan: plan)
            db.onEvent { recorder.append($0) }
            try db.migrateAllBlocking()
            try await db.step()  // an extra step announces nothing again
            db.close()
        }
        do {
            let db = try FerryDatabase(path: app, plan: plan)
            db.onEvent { recorder.append($0) }
            #expect(try await db.step() == nil)
            #expect(try db.isMigrated)
        }
        let finished = recorder.events.compactMap { if case .tableFinished(let t) = $0 { t } else { nil } }
        #expect(finished.sorted() == ["even", "odd"])
        #expect(recorder.events.filter { $0 == .allFinished }.count == 1)
    }

    @Test func autoMigrationCompletesAndStreamsEvents() async throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 20_000)
        let plan = MigrationPlan.messages(from: legacy)
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan)
        let events = db.events()
        db.startAutoMigration(.init(interval: .milliseconds(1)))
        var batches = 0
        for await event in events {
            if case .batch = event { batches += 1 }
            if event == .allFinished { break }
        }
        #expect(batches > 1)
        #expect(try db.isMigrated)
        #expect(try await db.pool.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 20_000)
    }

    @Test func repeatedErrorsStopAutoMigrationAndAreReported() async throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 100)
        let app = box.path("app.db")
        try Connection(path: app).execute("""
            CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL CONSTRAINT injected_failure CHECK (conversation_id < 0), body TEXT);
            """)
        let plan = MigrationPlan.messages(from: legacy)
        let db = try FerryDatabase(path: app, plan: plan)
        let events = db.events()
        db.startAutoMigration(.init(maximumConsecutiveFailures: 3, initialBackoff: .milliseconds(1), maximumBackoff: .milliseconds(4)))
        var errors = 0
        for await event in events {
            if case .error = event { errors += 1 }
            if case .autoMigrationStopped(let last) = event {
                #expect("\(last)".contains("injected_failure"))
                break
            }
        }
        #expect(errors == 3)
        #expect(try await db.pool.read { try $0.scalar("SELECT count(*) FROM messages", as: Int.self) } == 0)  // every failed batch rolled back
    }

    @Test func closedDatabaseIsNotMigratedInTheBackground() async throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 100_000)
        let app = box.path("app.db")
        let plan = MigrationPlan.messages(from: legacy)
        do {
            let db = try FerryDatabase(path: app, plan: plan)
            db.startAutoMigration(.init(interval: .milliseconds(50)))
            db.close()
        }
        try await Task.sleep(for: .milliseconds(200))
        let db = try Connection(path: app)
        let moved = try db.scalar("SELECT rows_moved FROM ferry_migration_tables", as: Int.self) ?? 0
        try await Task.sleep(for: .milliseconds(200))
        #expect(try db.scalar("SELECT rows_moved FROM ferry_migration_tables", as: Int.self) ?? 0 == moved)
        #expect(moved < 100_000)
    }
}

/// Collects events from callbacks on any thread.
final class EventRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [MigrationEvent] = []
    func append(_ event: MigrationEvent) { lock.lock(); storage.append(event); lock.unlock() }
    var events: [MigrationEvent] { lock.lock(); defer { lock.unlock() }; return storage }
}
