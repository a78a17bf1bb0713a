import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// Crash and reader-consistency torture tests.
///
/// The crash test runs a child process (`ferry-test-child crash`, Tests/FerryTestChild, with the
/// same plan) that steps the migration and commits app writes in a loop, kills it with SIGKILL at a random instant, and checks the files after every
/// kill: `PRAGMA integrity_check` is ok, every source row is visible exactly once through the
/// migrating table, the app's committed inserts form a gap-free prefix, and no row is quarantined.
/// `FERRY_CRASH_KILLS=N` sets the number of kills (default 24).
/// `FERRY_CRASH_KILLS`, default 24 (outside the suite: its time limit depends on it).
let crashKillCount = ProcessInfo.processInfo.environment["FERRY_CRASH_KILLS"].flatMap(Int.init) ?? 24

@Suite(.serialized, .timeLimit(.minutes(5 + crashKillCount / 10)))
struct CrashTests {
    static let sourceRows = 20_000

    static func plan(legacy: String, filtered: Bool = true) -> MigrationPlan {
        MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [
            TableMapping(target: "messages", source: "messages", filter: filtered ? "conversation_id <> 2" : nil),
        ])])
    }

    /// Filtered, cleanup deletes the moved rows in chunks; unfiltered, it retires the source table
    /// in one statement. `withoutRowid`: the source is `WITHOUT ROWID` (Ferry keeps its place by
    /// primary key) and feeds the rowid target's INTEGER PRIMARY KEY.
    @Test(arguments: [(filtered: true, withoutRowid: false), (false, false), (false, true), (true, true)])
    func killedAtRandomInstantsLosesAndDuplicatesNothing(filtered: Bool, withoutRowid: Bool) throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: Self.sourceRows, options: withoutRowid ? "WITHOUT ROWID" : "")
        let app = box.path("app.db")
        if withoutRowid {
            try Connection(path: app).execute("CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, body TEXT)")
        }
        do { _ = try FerryDatabase(path: app, plan: Self.plan(legacy: legacy, filtered: filtered)) }
        let expectedSourceRows = try Connection(path: legacy).scalar("SELECT count(*) FROM messages WHERE \(filtered ? "conversation_id <> 2" : "1")", as: Int.self)
        let kills = crashKillCount
        var random = SeededGenerator(state: 42)
        var appRowsSeen = 0
        for round in 0..<kills {
            let child = try startTestChild(["crash", app, legacy] + (filtered ? [] : ["unfiltered"]))
            Thread.sleep(forTimeInterval: Double(Int.random(in: 150...450, using: &random)) / 1000)
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()

            // The files as the crash left them.
            let raw = try Connection(path: app)
            #expect(try raw.scalar("PRAGMA integrity_check", as: String.self) == "ok", "round \(round)")
            raw.close()
            let db = try FerryDatabase(path: app, plan: Self.plan(legacy: legacy, filtered: filtered))
            let (sourceVisible, distinctIDs, total, appRows, maxApp) = try db.read { db in
                (try db.scalar("SELECT count(*) FROM messages WHERE body NOT LIKE 'app %'", as: Int.self) ?? -1,
                 try db.scalar("SELECT count(DISTINCT id) FROM messages", as: Int.self) ?? -1,
                 try db.scalar("SELECT count(*) FROM messages", as: Int.self) ?? -1,
                 try db.scalar("SELECT count(*) FROM messages WHERE body LIKE 'app %'", as: Int.self) ?? -1,
                 try db.scalar("SELECT max(CAST(substr(body, 5) AS INTEGER)) FROM messages WHERE body LIKE 'app %'", as: Int.self) ?? -1)
            }
            #expect(sourceVisible == expectedSourceRows, "round \(round): source rows visible")
            #expect(distinctIDs == total, "round \(round): duplicated ids")
            #expect(maxApp == appRows - 1, "round \(round): app inserts are not a gap-free prefix")
            #expect(appRows >= appRowsSeen, "round \(round): committed app rows lost")
            appRowsSeen = appRows
            db.close()
        }
        let db = try FerryDatabase(path: app, plan: Self.plan(legacy: legacy, filtered: filtered))
        defer { db.close() }
        try db.migrateAllBlocking()
        #expect(try db.isMigrated)
        let raw = try Connection(path: app)
        #expect(try raw.scalar("SELECT count(*) FROM messages WHERE body NOT LIKE 'app %'", as: Int.self) == expectedSourceRows)
        #expect(try raw.scalar("SELECT count(*) FROM sqlite_master WHERE name LIKE 'ferry_quarantine%'", as: Int.self) == 0)
        #expect(appRowsSeen > 0, "the child never committed an app write: kills came too early")
        // Cleanup deleted exactly the rows that moved: the source keeps the others, whole.
        let left = try Connection(path: legacy)
        let unmatched = Self.sourceRows - (expectedSourceRows ?? 0)
        if unmatched == 0 {
            #expect(try !left.tableExists("messages") || left.scalar("SELECT count(*) FROM messages", as: Int.self) == 0)
        } else {
            #expect(try left.scalar("SELECT count(*) FROM messages", as: Int.self) == unmatched)
            #expect(try left.scalar("SELECT count(*) FROM messages WHERE conversation_id = 2", as: Int.self) == unmatched)
        }
        print("crash test: \(kills) kills survived, \(appRowsSeen) app inserts committed")
    }

    /// Kills during cleanup alone: every row moved before the first kill, so each kill lands in a
    /// cleanup chunk (or between two). Cleanup deletes the rows the batches recorded, chunk by chunk
    /// in transactions on the source: after every kill the source still holds every row that never
    /// moved, the target every row that did, and at the end the source holds exactly the former.
    @Test func killedDuringCleanupLosesNothing() throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: Self.sourceRows)
        let app = box.path("app.db")
        let matching = try Connection(path: legacy).scalar("SELECT count(*) FROM messages WHERE conversation_id <> 2", as: Int.self) ?? 0
        do {
            let db = try FerryDatabase(path: app, plan: Self.plan(legacy: legacy))
            while let report = try db.step(), !report.tableFinished {}
            db.close()
        }
        var random = SeededGenerator(state: 7)
        var rounds = 0
        for round in 0..<max(4, crashKillCount / 3) {
            let left = try Connection(path: legacy)
            let remaining = try left.tableExists("messages") ? left.scalar("SELECT count(*) FROM messages", as: Int.self) ?? 0 : 0
            left.close()
            if remaining == Self.sourceRows - matching { break }  // cleaned
            rounds += 1
            let child = try startTestChild(["crash", app, legacy])
            Thread.sleep(forTimeInterval: Double(Int.random(in: 40...160, using: &random)) / 1000)
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            let source = try Connection(path: legacy)
            #expect(try source.scalar("PRAGMA integrity_check", as: String.self) == "ok", "round \(round)")
            #expect(try source.scalar("SELECT count(*) FROM messages WHERE conversation_id = 2", as: Int.self) == Self.sourceRows - matching,
                    "round \(round): a row that never moved was deleted")
            source.close()
            let db = try FerryDatabase(path: app, plan: Self.plan(legacy: legacy))
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM messages WHERE body NOT LIKE 'app %'", as: Int.self) } == matching,
                    "round \(round): moved rows visible")
            db.close()
        }
        let db = try FerryDatabase(path: app, plan: Self.plan(legacy: legacy))
        try db.migrateAllBlocking()
        db.close()
        let left = try Connection(path: legacy)
        #expect(try left.scalar("SELECT count(*) FROM messages", as: Int.self) == Self.sourceRows - matching)
        #expect(try left.scalar("SELECT count(*) FROM messages WHERE conversation_id <> 2", as: Int.self) == 0)
        #expect(rounds > 0, "cleanup ended before the first kill")
        print("crash test (cleanup): \(rounds) kills during cleanup survived")
    }

    /// Readers count and checksum the migrating table continuously while batches commit.
    @Test func readersNeverSeeARowMissingOrTwice() async throws {
        let box = Sandbox()
        let legacy = try box.makeLegacy(rows: 30_000)
        let db = try FerryDatabase(path: box.path("app.db"), plan: Self.plan(legacy: legacy))
        defer { db.close() }
        let expected: (Int, Int) = try await db.read { (db: FerryConnection) in
            (try db.scalar("SELECT count(*) FROM messages", as: Int.self)!, try db.scalar("SELECT sum(id) FROM messages", as: Int.self)!)
        }
        db.startAutoMigration(.init(budget: .milliseconds(1), interval: .microseconds(200)))
        let checks = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    var checks = 0
                    while try !db.isMigrated {
                        let seen = try await db.read { db in
                            (try db.scalar("SELECT count(*) FROM messages", as: Int.self)!, try db.scalar("SELECT sum(id) FROM messages", as: Int.self)!)
                        }
                        #expect(seen == expected)
                        checks += 1
                    }
                    return checks
                }
            }
            return try await group.reduce(0, +)
        }
        print("reader consistency: \(checks) checks while batches committed")
        #expect(checks > 0)
        #expect(try db.isMigrated)
    }
}
