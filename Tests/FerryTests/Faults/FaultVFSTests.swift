import FerryTestSupport
import FerrySQLite
import CFerryFaultVFS
import Foundation
import Testing
@testable import Ferry

extension Faults {
    /// The fault VFS itself: it counts, fails what it is told to, and nothing else.
    @Suite(.timeLimit(.minutes(1)))
    struct FaultVFSTests {
        @Test func countsOperationsPerFileAndFailsTheNthOne() throws {
            let box = Sandbox()
            let path = box.path("counted.db")
            let db = try Connection(path: path, configuration: FaultVFS.configuration())
            try db.execute("CREATE TABLE t(x)")
            try db.execute("INSERT INTO t VALUES (1), (2)")
            #expect(FaultVFS.count(.open, path: path, files: .database) == 1)
            #expect(FaultVFS.count(.open, path: path, files: .wal) == 1)
            #expect(FaultVFS.count(.write, path: path, files: .wal) > 0)
            #expect(FaultVFS.count(.lock, path: path, files: .database) > 0)
            #expect(FaultVFS.count(.shmLock, path: path) > 0)
            #expect(FaultVFS.count(.write, path: box.path("other.db")) == 0)

            let writes = FaultVFS.arm(path: path, files: .wal, operations: [.write], trigger: .nth(0), failure: .full)
            #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (3)") }
            #expect(writes.fired == 1)
            #expect(writes.lastPath == path + "-wal")
            // Only the first matching write failed: the next statement succeeds.
            try db.execute("INSERT INTO t VALUES (4)")
            #expect(writes.fired == 1)
            writes.disarm()
            #expect(try db.scalar("SELECT group_concat(x) FROM t", as: String.self) == "1,2,4")
            #expect(try db.scalar("PRAGMA integrity_check", as: String.self) == "ok")
        }

        @Test func failuresCarryTheRequestedCode() throws {
            let box = Sandbox()
            let path = box.path("codes.db")
            let setup = try Connection(path: path)
            try setup.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
            setup.close()
            let cases: [(FaultVFS.Operation, FaultVFS.Failure, FaultVFS.Files, Int32)] = [
                (.read, .ioError, .database, 266),  // SQLITE_IOERR_READ
                (.open, .ioError, .database, 14),   // SQLITE_CANTOPEN
                (.lock, .busy, .database, 5),
            ]
            for (operation, failure, files, expected) in cases {
                let rule = FaultVFS.arm(path: path, files: files, operations: [operation], trigger: .from(0), failure: failure)
                defer { rule.disarm() }
                do {
                    let db = try Connection(path: path, configuration: FaultVFS.configuration(.init(busyTimeout: .milliseconds(0))))
                    _ = try db.scalar("SELECT count(*) FROM t", as: Int.self)
                    Issue.record("\(operation) \(failure) did not fail")
                } catch {
                    #expect(error.resultCode.rawValue == expected || error.resultCode.primaryCode == expected, "\(operation): \(error)")
                }
                #expect(rule.fired >= 1)
            }
        }

        @Test func randomFaultsAreReproducibleFromTheirSeed() throws {
            func run(seed: UInt64) throws -> [Bool] {
                let box = Sandbox()
                let path = box.path("random.db")
                let db = try Connection(path: path, configuration: FaultVFS.configuration())
                try db.execute("CREATE TABLE t(x)")
                let rule = FaultVFS.arm(path: path, operations: [.write], trigger: .random(probability: 0.3, seed: seed), failure: .ioError)
                defer { rule.disarm() }
                return (0..<40).map { i in (try? db.execute("INSERT INTO t VALUES (?)", [.integer(Int64(i))])) != nil }
            }
            let first = try run(seed: 7)
            #expect(first == (try run(seed: 7)))
            #expect(first.contains(false) && first.contains(true))
        }

        @Test func compiledAgainstTheLoadedEngine() {
            // The package trait selects the header (FERRY_FAULT_SQLCIPHER): SQLCipher's SQLite 3.46
            // and Debian's 3.40 differ, so a VFS built against the other engine's header shows here.
            #expect(Int(ferry_fault_vfs_compiled_version()) == SQLiteEngine.sqliteVersionNumber)
        }

        @Test func anUnknownVFSIsAnError() {
            #expect(throws: SQLiteError.self) { try Connection(path: Sandbox().path("x.db"), configuration: .init(vfs: "no-such-vfs")) }
        }
    }
}
