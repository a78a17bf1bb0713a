import FerrySQLite
import FerryTestSupport
import Testing
@testable import Ferry

/// Cleanup makes the target's commits durable with one synced commit, not a checkpoint.
@Suite struct SyncEarlierCommitsTests {
    /// The commit writes frames (under `synchronous = FULL`, its commit syncs the WAL), then the
    /// connection's own level is back and the catalog holds no trace.
    @Test func oneSyncedCommitAndTheLevelIsRestored() throws {
        let box = Sandbox()
        let db = try Connection(path: box.path("app.db"))
        try MigrationState.create(on: db)
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
        #expect(try db.scalar("PRAGMA main.synchronous", as: Int.self) == 1)  // NORMAL, Ferry's default
        var frames: [Int] = []
        db.setWALCommitHook { _, count in frames.append(count) }
        try MigrationState.syncEarlierCommits(on: db)
        #expect(frames.count == 1 && frames[0] > 0)  // one commit, which wrote frames (a commit without any syncs nothing)
        #expect(try db.scalar("PRAGMA main.synchronous", as: Int.self) == 1)
        #expect(try db.scalar("SELECT count(*) FROM \(MigrationState.flagsTable) WHERE key = 'sync'", as: Int.self) == 0)
    }
}
