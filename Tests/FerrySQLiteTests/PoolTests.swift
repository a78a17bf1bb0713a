import FerryTestSupport
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import FerrySQLite

/// A query that never ends on its own: it counts an infinite recursive CTE.
private let endlessQuery = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c"

/// The blocking `DatabasePool.read`, callable from async code (where the async overload wins).
private func readNow<T>(_ pool: DatabasePool, _ body: (Connection) throws -> T) throws -> T { try pool.read(body) }

/// The blocking `DatabasePool.write`, callable from async code (where the async overload wins).
private func writeNow<T>(_ pool: DatabasePool, _ body: (Connection) throws -> T) throws -> T { try pool.write(body) }

/// The blocking `DatabasePool.writeWithoutTransaction`, callable from async code.
private func writeWithoutTransactionNow<T>(_ pool: DatabasePool, _ body: (Connection) throws -> T) throws -> T {
    try pool.writeWithoutTransaction(body)
}

/// Polls `condition` every 2 ms until it holds (or 15,000 polls, 30 s of running, record an issue:
/// generous, because on a loaded machine the tests share few threads).
private func waitUntil(_ what: String, _ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    // Counts polls rather than wall time: a test starved of threads by others (2 cores, the whole
    // suite in parallel) does not poll, so it cannot time out while nothing ran.
    for _ in 0..<15_000 {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(2))
    }
    if !condition() { Issue.record("timed out waiting until \(what)", sourceLocation: sourceLocation) }
}

/// A pool on a fresh WAL file holding `accounts(id, balance)` with two rows of 500 and `meta(version)`.
private func bankPool(_ dir: Sandbox, readers: Int = 4,
                      prepareForUse: (@Sendable (Connection) throws -> Void)? = nil) throws -> DatabasePool {
    let pool = try DatabasePool(path: dir.path("bank.db"), maximumReaderCount: readers, prepareForUse: prepareForUse)
    try writeNow(pool) { db in
        try db.execute("""
            CREATE TABLE accounts(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL);
            INSERT INTO accounts VALUES (1, 500), (2, 500);
            CREATE TABLE meta(version INTEGER NOT NULL);
            INSERT INTO meta VALUES (0);
            """)
    }
    return pool
}

@Suite(.timeLimit(.minutes(3)))
struct PoolTests {
    @Test func poolOpensInWALMode() throws {
        let dir = Sandbox()
        let pool = try bankPool(dir)
        #expect(try readNow(pool) { try $0.scalar("PRAGMA journal_mode", as: String.self) } == "wal")
        #expect(pool.maximumReaderCount == 4)
        #expect(try DatabasePool(path: dir.path("x.db"), maximumReaderCount: 0).maximumReaderCount == 1)
    }

    @Test func readersSeeOnlyCommittedSnapshots() async throws {
        let dir = Sandbox()
        let pool = try bankPool(dir)
        let transfers = 200
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for i in 0..<transfers {
                    try await pool.write { db in
                        // Money leaves one row before it reaches the other: a reader looking inside
                        // this transaction would see a smaller total.
                        let amount = i % 7 + 1
                        let (from, to) = i.isMultiple(of: 2) ? (1, 2) : (2, 1)
                        try db.execute("UPDATE accounts SET balance = balance - ? WHERE id = ?", [.integer(Int64(amount)), .integer(Int64(from))])
                        try db.execute("UPDATE meta SET version = version + 1")
                        try db.execute("UPDATE accounts SET balance = balance + ? WHERE id = ?", [.integer(Int64(amount)), .integer(Int64(to))])
                    }
                }
            }
            for _ in 0..<4 {
                group.addTask {
                    var lastVersion = -1
                    while lastVersion < transfers {
                        let (total, version) = try await pool.read { db -> (Int, Int) in
                            // Three separate statements, one snapshot.
                            let a = try db.scalar("SELECT balance FROM accounts WHERE id = 1", as: Int.self) ?? 0
                            let version = try db.scalar("SELECT version FROM meta", as: Int.self) ?? -1
                            let b = try db.scalar("SELECT balance FROM accounts WHERE id = 2", as: Int.self) ?? 0
                            return (a + b, version)
                        }
                        #expect(total == 1000)
                        #expect(version >= lastVersion, "snapshots never go back in time")
                        lastVersion = version
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try readNow(pool) { try $0.scalar("SELECT version FROM meta", as: Int.self) } == transfers)
    }

    @Test func uncommittedWritesAreInvisibleToReaders() throws {
        let dir = Sandbox()
        let pool = try bankPool(dir)
        try writeNow(pool) { db in
            try db.execute("UPDATE meta SET version = 1")
            // Inside the write, a reader still sees the last committed state.
            #expect(try readNow(pool) { try $0.scalar("SELECT version FROM meta", as: Int.self) } == 0)
        }
        #expect(try readNow(pool) { try $0.scalar("SELECT version FROM meta", as: Int.self) } == 1)
    }

    @Test func aReadKeepsItsSnapshotWhileWritesCommit() throws {
        let dir = Sandbox()
        let pool = try bankPool(dir)
        let (before, after) = try readNow(pool) { db -> (Int?, Int?) in
            let before = try db.scalar("SELECT version FROM meta", as: Int.self)
            try writeNow(pool) { try $0.execute("UPDATE meta SET version = 42") }
            return (before, try db.scalar("SELECT version FROM meta", as: Int.self))
        }
        #expect(before == 0 && after == 0)
        #expect(try readNow(pool) { try $0.scalar("SELECT version FROM meta", as: Int.self) } == 42)
    }

    @Test func writesAreSerialized() async throws {
        let dir = Sandbox()
        let pool = try bankPool(dir)
        let inside = Shared(0)
        let maximumInside = Shared(0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in 0..<6 {
                group.addTask {
                    for _ in 0..<25 {
                        let body: @Sendable (Connection) throws -> Void = { db in
                            let now = inside.update { $0 += 1; return $0 }
                            maximumInside.update { $0 = max($0, now) }
                            // Read-modify-write in two statements: lost updates would show in the total.
                            let version = try db.scalar("SELECT version FROM meta", as: Int.self) ?? 0
                            try db.execute("UPDATE meta SET version = ?", [.integer(Int64(version + 1))])
                            inside.update { $0 -= 1 }
                        }
                        if t.isMultiple(of: 2) {
                            try await pool.write { db in try body(db) }
                        } else {
                            try writeNow(pool, body)  // the blocking form, from a task
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let maximum = maximumInside.value
        #expect(maximum == 1)
        #expect(try readNow(pool) { try $0.scalar("SELECT version FROM meta", as: Int.self) } == 150)
    }

    @Test func asyncAndBlockingFormsReturnValues() async throws {
        let dir = Sandbox()
        let pool = try bankPool(dir)
        let id = try await pool.write { db -> Int64 in
            try db.execute("INSERT INTO accounts(balance) VALUES (?)", [7])
            return db.lastInsertRowid
        }
        #expect(id == 3)
        #expect(try await pool.read { try $0.scalar("SELECT balance FROM accounts WHERE id = ?", [.integer(id)], as: Int.self) } == 7)
        let inTransaction = try await pool.writeWithoutTransaction { $0.isInTransaction }
        #expect(!inTransaction)
        #expect(try writeWithoutTransactionNow(pool) { $0.isInTransaction } == false)
        #expect(try await pool.write { $0.isInTransaction })
        #expect(try await pool.read { $0.isInTransaction })
        // A throwing write rolls back.
        await #expect(throws: SQLiteError.self) {
            try await pool.write { db in
                try db.execute("DELETE FROM accounts")
                try db.execute("INSERT INTO accounts VALUES (NULL, NULL)")
            }
        }
        #expect(try readNow(pool) { try $0.scalar("SELECT count(*) FROM accounts", as: Int.self) } == 3)
        // Readers are read-only connections.
        let error = #expect(throws: SQLiteError.self) { try readNow(pool) { try $0.execute("DELETE FROM accounts") } }
        #expect(error?.resultCode.primary == .readonly)
    }

    @Test func prepareForUseRunsBeforeEveryAccess() async throws {
        let dir = Sandbox()
        let calls = Shared(0)
        let pool = try bankPool(dir) { db in
            #expect(!db.isInTransaction)
            calls.update { $0 += 1 }
        }
        let afterSetup = calls.value
        #expect(afterSetup == 1)
        _ = try readNow(pool) { _ in 0 }
        _ = try await pool.read { _ in 0 }
        try writeWithoutTransactionNow(pool) { _ in }
        _ = try await pool.write { _ in 0 }
        let total = calls.value
        #expect(total == afterSetup + 4)
    }

    @Test func inMemoryPoolReadsThroughTheWriter() async throws {
        let pool = try DatabasePool(path: ":memory:")
        try writeNow(pool) { try $0.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
        #expect(try readNow(pool) { try $0.scalar("SELECT x FROM t", as: Int.self) } == 1)
        #expect(try await pool.read { try $0.scalar("SELECT x FROM t", as: Int.self) } == 1)
    }

    // MARK: Cancellation

    @Test func cancellingAnAsyncReadInterruptsItsQuery() async throws {
        let dir = Sandbox()
        let pool = try bankPool(dir, readers: 1)
        let started = Shared(false)
        let task = Task {
            try await pool.read { db -> Int? in
                started.update { $0 = true }
                return try db.scalar(endlessQuery, as: Int.self)
            }
        }
        try await waitUntil("the query started") { started.value }
        try await Task.sleep(for: .milliseconds(20))
        task.cancel()
        await #expect(throws: SQLiteError.cancelled) { try await task.value }
        // The only reader connection is back in the pool and works.
        #expect(try await pool.read { try $0.scalar("SELECT sum(balance) FROM accounts", as: Int.self) } == 1000)
        #expect(try readNow(pool) { try $0.scalar("SELECT sum(balance) FROM accounts", as: Int.self) } == 1000)
    }

    @Test func cancellingAnAsyncWriteRollsItBack() async throws {
        let dir = Sandbox()
        let pool = try bankPool(dir)
        let started = Shared(false)
        let task = Task {
            try await pool.write { db -> Int? in
                try db.execute("DELETE FROM accounts")
                started.update { $0 = true }
                return try db.scalar(endlessQuery, as: Int.self)
            }
        }
        try await waitUntil("the query started") { started.value }
        try await Task.sleep(for: .milliseconds(20))
        task.cancel()
        await #expect(throws: SQLiteError.cancelled) { try await task.value }
        #expect(try readNow(pool) { try $0.scalar("SELECT count(*) FROM accounts", as: Int.self) } == 2)
        // The writer works again, for both forms.
        try await pool.write { try $0.execute("UPDATE meta SET version = 1") }
        try writeNow(pool) { try $0.execute("UPDATE meta SET version = 2") }
        #expect(try readNow(pool) { try $0.scalar("SELECT version FROM meta", as: Int.self) } == 2)
    }

    /// A typed body (`throws(E)`) throws the interruption as its own error type; the caller still
    /// gets a cancellation, as from an untyped body.
    @Test func cancellingATypedBodyIsACancellation() async throws {
        let dir = Sandbox()
        let pool = try bankPool(dir, readers: 1)
        for write in [false, true] {
            let started = Shared(false)
            let task = Task { () async throws(BodyError) -> Int? in
                let body: @Sendable (Connection) throws(BodyError) -> Int? = { db throws(BodyError) in
                    started.update { $0 = true }
                    do throws(SQLiteError) { return try db.scalar(endlessQuery, as: Int.self) } catch { throw BodyError(error) }
                }
                return write ? try await pool.writeWithoutTransaction(body) : try await pool.read(body)
            }
            try await waitUntil("the query started") { started.value }
            try await Task.sleep(for: .milliseconds(20))
            task.cancel()
            await #expect(throws: BodyError(.cancelled), "write: \(write)") { try await task.value }
        }
        #expect(try await pool.read { try $0.scalar("SELECT sum(balance) FROM accounts", as: Int.self) } == 1000)
    }

    @Test func aTaskCancelledBeforehandDoesNotRunTheBody() async throws {
        let dir = Sandbox()
        let pool = try bankPool(dir)
        let ran = Shared(0)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await #expect(throws: SQLiteError.cancelled) {
                try await pool.read { _ in ran.update { $0 += 1 } }
            }
            await #expect(throws: SQLiteError.cancelled) {
                try await pool.write { _ in ran.update { $0 += 1 } }
            }
        }
        await task.value
        let bodyRuns = ran.value
        #expect(bodyRuns == 0)
        #expect(try await pool.read { _ in 1 } == 1)
    }

    @Test func cancellingAReadWaitingForAReaderThrowsCancelled() async throws {
        let dir = Sandbox()
        let pool = try bankPool(dir, readers: 1)
        // Hold the only reader on another thread.
        let holding = Shared(false), done = Shared(false)
        let release = DispatchSemaphore(value: 0)
        Thread {  // not DispatchQueue.global(): blocking there can starve Swift concurrency on Linux
            _ = try? readNow(pool) { _ in
                holding.update { $0 = true }
                release.wait()
            }
            done.update { $0 = true }
        }.start()
        try await waitUntil("the reader is held") { holding.value }
        let ran = Shared(false)
        let waiting = Task { try await pool.read { _ in ran.update { $0 = true } } }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        try await Task.sleep(for: .milliseconds(20))
        release.signal()
        await #expect(throws: SQLiteError.cancelled) { try await waiting.value }
        let bodyRan = ran.value
        #expect(!bodyRan)
        try await waitUntil("the reader is released") { done.value }
        #expect(try await pool.read { _ in 5 } == 5)
    }

    @Test func interruptWriterStopsABlockingWrite() async throws {
        let dir = Sandbox()
        let pool = try bankPool(dir)
        let started = Shared(false)
        let outcome = Shared<SQLiteError?>(nil)
        let finished = Shared(false)
        Thread {
            do {
                _ = try writeNow(pool) { db -> Int? in
                    started.update { $0 = true }
                    return try db.scalar(endlessQuery, as: Int.self)
                }
            } catch let error as SQLiteError {
                outcome.update { $0 = error }
            } catch {}
            finished.update { $0 = true }
        }.start()
        try await waitUntil("the query started") { started.value }
        // An interrupt only reaches a running statement: repeat it until the write gave up.
        while !finished.value {
            pool.interruptWriter()
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(outcome.value?.resultCode == .interrupt)
        #expect(try writeNow(pool) { try $0.scalar("SELECT 1", as: Int.self) } == 1)
    }

    // MARK: Close

    @Test func closedPoolThrowsConnectionClosed() async throws {
        let dir = Sandbox()
        let pool = try bankPool(dir)
        _ = try readNow(pool) { _ in 0 }  // opens a reader
        #expect(pool.isOpen)
        pool.close()
        #expect(!pool.isOpen)
        pool.close()
        #expect(throws: SQLiteError.connectionClosed) { try readNow(pool) { _ in 0 } }
        #expect(throws: SQLiteError.connectionClosed) { try writeNow(pool) { _ in 0 } }
        #expect(throws: SQLiteError.connectionClosed) { try writeWithoutTransactionNow(pool) { _ in 0 } }
        await #expect(throws: SQLiteError.connectionClosed) { try await pool.read { _ in 0 } }
        await #expect(throws: SQLiteError.connectionClosed) { try await pool.write { _ in 0 } }
        // Every connection is closed: the file can be opened and its WAL checkpointed exclusively.
        let db = try Connection(path: dir.path("bank.db"))
        try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(try db.scalar("SELECT sum(balance) FROM accounts", as: Int.self) == 1000)
    }

    @Test func closeFromInsideAWriteClosesTheWriter() throws {
        let dir = Sandbox()
        let pool = try bankPool(dir)
        try writeWithoutTransactionNow(pool) { _ in pool.close() }
        #expect(!pool.isOpen)
        #expect(throws: SQLiteError.connectionClosed) { try writeNow(pool) { _ in 0 } }
    }
}

/// The error type of a typed body, as an app's own layer would define it.
private struct BodyError: SQLiteErrorConvertible, Equatable {
    let error: SQLiteError
    init(_ error: SQLiteError) { self.error = error }
    var isInterruption: Bool { error.isInterruption }
}
