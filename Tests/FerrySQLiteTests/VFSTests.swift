import FerryTestSupport
import Foundation
import Testing
@testable import FerrySQLite

/// `Configuration.vfs`: connections, attached databases and pool readers open through the named VFS.
///
/// SQLite's built-in `unix-dotfile` VFS shows it: while it holds a lock on `x.db` a directory
/// `x.db.lock` exists (it has no shared memory, so these tests use the rollback journal).
@Suite struct VFSTests {
    static let dotfile = Connection.Configuration(journalMode: .delete, vfs: "unix-dotfile")

    @Test func theConnectionAndItsAttachedDatabasesUseTheVFS() throws {
        let dir = Sandbox()
        let db = try Connection(path: dir.path("main.db"), configuration: Self.dotfile)
        try db.execute("CREATE TABLE t(x)")
        let other = dir.path("other.db")
        let plain = try Connection(path: other, configuration: .init(journalMode: .delete))
        try plain.execute("CREATE TABLE u(y)")
        plain.close()
        try db.attach(path: other, as: "other")
        try db.transaction(.immediate) {
            try db.execute("INSERT INTO t VALUES (1)")
            try db.execute("INSERT INTO other.u VALUES (2)")
            #expect(FileManager.default.fileExists(atPath: dir.path("main.db.lock")))
            #expect(FileManager.default.fileExists(atPath: other + ".lock"))
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("main.db.lock")))
        #expect(!FileManager.default.fileExists(atPath: other + ".lock"))
    }

    @Test func poolReadersUseTheVFS() throws {
        let dir = Sandbox()
        let path = dir.path("pool.db")
        let pool = try DatabasePool(path: path, configuration: Self.dotfile)
        defer { pool.close() }
        try pool.write { try $0.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
        let lockedWhileReading = try pool.read { db in
            _ = try db.scalar("SELECT count(*) FROM t", as: Int.self)
            return FileManager.default.fileExists(atPath: path + ".lock")
        }
        #expect(lockedWhileReading)
    }

    @Test func anUnknownVFSFailsToOpen() throws {
        let dir = Sandbox()
        #expect {
            try Connection(path: dir.path("x.db"), configuration: .init(vfs: "no-such-vfs"))
        } throws: { error in
            (error as? SQLiteError)?.resultCode == .error && "\(error)".contains("no such vfs")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("x.db")))
    }
}
