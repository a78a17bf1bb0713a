import FerrySQLite
import FerryTestSupport
import Foundation
import Testing
@testable import Ferry

/// `SourceReadPins`: a source file in WAL mode is held in a read transaction while a table it
/// feeds migrates, so that the app's reads of it lock without system calls; the pin goes when
/// the file's tables finish (cleanup then writes the file) and when the database closes. A file
/// with a rollback journal is never pinned: a pin would keep every writer out.
@Suite(.timeLimit(.minutes(2))) struct SourceReadPinsTests {
    static let rows: [(Int, Int, String?, Int)] = (1...40).map { ($0, $0 * 10, "m\($0)", $0) }

    /// The pinned files, once the pins caught up with the engine.
    static func pinned(_ db: FerryDatabase) -> Set<String> {
        db.sourcePins.waitUntilIdle()
        return db.sourcePins.pinnedPaths
    }

    @Test(arguments: SchemaStatementTests.Placement.available.filter { $0 != .sameFile })
    func aMigratingSourceIsPinnedUntilItsTablesFinish(placement: SchemaStatementTests.Placement) throws {
        let pair = try SchemaStatementTests.Pair(placement: placement, rows: Self.rows, stepFirst: true)
        let source = URL(fileURLWithPath: pair.box.path("legacy.db")).resolvingSymlinksInPath().path
        pair.same("SELECT id, a FROM t WHERE id = 30")
        #expect(Self.pinned(pair.db).map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path } == [source])
        // Reads and writes of pending rows as on the finished table, pinned.
        pair.same("UPDATE t SET a = -1 WHERE id = 31 RETURNING *")
        pair.same("DELETE FROM t WHERE id = 32")
        try pair.sameTable()
        // Finished: no pin, and cleanup wrote the file (the table is gone from it).
        try pair.finish()
        pair.same("SELECT count(*) FROM t")
        #expect(Self.pinned(pair.db).isEmpty)
        let cipher: Cipher? = placement == .encrypted ? .passphrase("k", settings: CipherSettings(compatibility: 4, kdfIterations: 2)) : nil
        let legacy = try Connection(path: source, configuration: .init(cipher: cipher))
        defer { legacy.close() }
        #expect(try legacy.scalar("SELECT count(*) FROM sqlite_master WHERE name = 't'", as: Int.self) == 0)
    }

    /// Two tables from one file: the pin stays while either migrates, and goes before cleanup,
    /// which begins once neither does, writes the file.
    @Test func aFileStaysPinnedWhileAnyOfItsTablesMigrates() throws {
        let box = Sandbox()
        let legacy = try Connection(path: box.path("legacy.db"))
        try legacy.execute("CREATE TABLE a(id INTEGER PRIMARY KEY, v)")
        try legacy.execute("CREATE TABLE b(id INTEGER PRIMARY KEY, v)")
        try legacy.execute("INSERT INTO a VALUES (1, 'a1'), (2, 'a2')")
        try legacy.execute("WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 60) INSERT INTO b SELECT x, 'b' || x FROM n")
        let plan = MigrationPlan(sources: [MigrationSource(.file(box.path("legacy.db")), tables: [TableMapping(target: "a", source: "a"),
                                                                                                  TableMapping(target: "b", source: "b")])])
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .fixedBatches(of: 1))
        defer { db.close() }
        func use() throws { _ = try db.read { try $0.scalar("SELECT count(*) FROM a", as: Int.self) } }
        var states: Set<String> = []
        while let report = try db.step() {
            try use()
            let tables = try db.progress().tables
            let migrating = tables.contains { $0.state != .finished }
            let pinned = Self.pinned(db).count
            states.insert("\(report.kind) migrating \(migrating) pinned \(pinned)")
            if report.kind == .cleanup { #expect(pinned == 0, "cleanup writes the file") }
            if migrating { #expect(pinned == 1) }
        }
        #expect(states.contains("move migrating true pinned 1"))
        #expect(states.contains { $0.hasPrefix("cleanup migrating false") })
        // Cleanup dropped both tables from the file.
        #expect(try legacy.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table'", as: Int.self) == 0)
        legacy.close()
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM b", as: Int.self) } == 60)
    }

    @Test func theDatabaseClosesItsPins() throws {
        let pair = try SchemaStatementTests.Pair(placement: .otherFile, rows: Self.rows, stepFirst: true)
        pair.same("SELECT id, a FROM t WHERE id = 30")
        #expect(Self.pinned(pair.db).count == 1)
        pair.db.close()
        #expect(pair.db.sourcePins.pinnedPaths.isEmpty)
        // Nothing holds the file: a checkpoint that must wait for every reader ends at once.
        let legacy = try Connection(path: pair.box.path("legacy.db"), configuration: .init(busyTimeout: .milliseconds(1)))
        defer { legacy.close() }
        try legacy.execute("INSERT INTO t(a) VALUES (1)")
        #expect(try legacy.fetchOne("PRAGMA wal_checkpoint(TRUNCATE)")?.values.first == .integer(0))
    }

    /// A source kept in rollback-journal mode is read without a pin: another connection writes it
    /// while the table migrates, without waiting.
    @Test func aRollbackJournalSourceIsNotPinned() throws {
        let box = Sandbox()
        let legacy = try Connection(path: box.path("legacy.db"), configuration: .init(journalMode: .delete))
        try legacy.execute("CREATE TABLE other(x)")
        try legacy.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER)")
        try legacy.execute("INSERT INTO t VALUES (1, 10), (2, 20), (3, 30), (4, 40)")
        let plan = MigrationPlan(sources: [MigrationSource(.file(box.path("legacy.db")), tables: [TableMapping(target: "t", source: "t")],
                                                           keepsJournalMode: true)])
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .fixedBatches(of: 1))
        defer { db.close() }
        try db.step()
        #expect(try db.read { try $0.scalar("SELECT a FROM t WHERE id = 3", as: Int.self) } == 30)
        #expect(Self.pinned(db).isEmpty)
        try legacy.execute("INSERT INTO other VALUES (1)")  // a writer of another table of the file
        #expect(try legacy.scalar("PRAGMA journal_mode", as: String.self) == "delete")
        legacy.close()
        try db.migrateAllBlocking()
        #expect(try db.read { try $0.scalar("SELECT sum(a) FROM t", as: Int.self) } == 100)
    }
}
