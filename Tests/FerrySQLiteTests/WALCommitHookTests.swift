import FerryTestSupport
import Foundation
import Synchronization
import Testing
@testable import FerrySQLite

@Suite(.timeLimit(.minutes(3)))
struct WALCommitHookTests {
    /// Every (schema, frames) the hook saw, in order.
    private final class Calls: Sendable {
        let value = Mutex<[(String, Int)]>([])
        var all: [(String, Int)] { value.withLock { $0 } }
        func append(_ schema: String, _ frames: Int) { value.withLock { $0.append((schema, frames)) } }
    }

    @Test func reportsTheFramesOfEachCommitAndTheirFallAfterARestart() throws {
        let directory = Sandbox()
        let db = try Connection(path: directory.path("hook.db"))
        try db.execute("CREATE TABLE t(x)")
        try db.execute("ATTACH DATABASE ? AS other", [.text(directory.path("other.db"))])
        try db.execute("PRAGMA other.journal_mode = WAL")
        try db.execute("CREATE TABLE other.u(x)")
        let calls = Calls()
        db.setWALCommitHook { schema, frames in calls.append(schema, frames) }

        try db.execute("INSERT INTO t VALUES (randomblob(10000))")  // three overflow pages and more
        let first = try #require(calls.all.last)
        #expect(first.0 == "main" && first.1 > 3)
        try db.execute("INSERT INTO t VALUES (1)")
        #expect(calls.all.last!.1 > first.1, "the log grows")
        try db.execute("INSERT INTO other.u VALUES (1)")
        #expect(calls.all.last!.0 == "other")

        // A complete checkpoint, then a write: the log restarts and the count falls back.
        let before = calls.all.last { $0.0 == "main" }!.1
        try db.execute("PRAGMA main.wal_checkpoint(PASSIVE)")
        try db.execute("INSERT INTO t VALUES (2)")
        let after = calls.all.last!
        #expect(after.0 == "main" && after.1 < before && after.1 >= 1)

        // A rolled-back transaction commits nothing.
        let count = calls.all.count
        try? db.transaction { () throws -> Void in
            try db.execute("INSERT INTO t VALUES (3)")
            throw CancellationError()
        }
        #expect(calls.all.count == count)

        db.setWALCommitHook(nil)
        try db.execute("INSERT INTO t VALUES (4)")
        #expect(calls.all.count == count)
        db.close()
    }
}
