import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@testable import Ferry

/// A source `WITHOUT ROWID`: Ferry keeps its place by primary key (a key cursor, row keys in the
/// moved set and the move lists), and the migrating table reads and writes as the finished one,
/// whether the target is the copied `WITHOUT ROWID` table or a rowid table whose INTEGER PRIMARY
/// KEY the source's key feeds. Every placement, before and after a step, batches of two rows.
@Suite(.timeLimit(.minutes(2)))
struct WithoutRowidSourceTests {
    typealias Pair = SchemaStatementTests.Pair
    typealias Placement = SchemaStatementTests.Placement

    enum TargetKind: CaseIterable { case copied, rowidTable }

    func pair(_ placement: Placement, _ kind: TargetKind, stepFirst: Bool, appSchema: [String] = []) throws -> Pair {
        // A rowid target exists before the plan registers (an index makes the Pair create it).
        try Pair(placement: placement, rows: SchemaStatementTests.rows,
                 appSchema: kind == .rowidTable ? ["CREATE INDEX t_a ON t(a)"] + appSchema : appSchema,
                 sourceOptions: "WITHOUT ROWID", targetOptions: kind == .copied && !appSchema.isEmpty ? "WITHOUT ROWID" : "", stepFirst: stepFirst)
    }

    @Test(arguments: Placement.available, TargetKind.allCases)
    func readsAndWritesAsTheFinishedTable(placement: Placement, kind: TargetKind) throws {
        for stepFirst in [false, true] {
            let pair = try pair(placement, kind, stepFirst: stepFirst, appSchema: ["CREATE UNIQUE INDEX t_b ON t(b)"])
            try pair.sameTable()
            pair.same("SELECT count(*), sum(a), group_concat(b, ',') FROM t")
            pair.same("SELECT * FROM t WHERE id = 5")
            pair.same("SELECT * FROM t WHERE id > 3 ORDER BY id DESC")
            if kind == .rowidTable || !EngineQuirks.subqueryRowidReadsNull {
                let rowids = pair.same("SELECT rowid, * FROM t ORDER BY id")
                #expect(rowids.hasPrefix("error") == (kind == .copied))
            }
            #expect(pair.same("INSERT INTO t(id, a, b) VALUES (5, 1, 'new')").contains("UNIQUE"))
            #expect(pair.same("INSERT INTO t(id, a, b) VALUES (70, 1, 'z')").contains("UNIQUE"))  // pending row 5 holds 'z'
            pair.same("INSERT OR REPLACE INTO t(id, a, b) VALUES (6, 66, 'replaced') RETURNING *")
            pair.same("INSERT INTO t(id, a, b) VALUES (4, 44, 'up') ON CONFLICT(id) DO UPDATE SET a = excluded.a RETURNING id, a, b")
            pair.same("INSERT OR IGNORE INTO t(id, a, b) VALUES (3, 0, 'ignored'), (71, 7, 'kept')")
            pair.same("SELECT changes()")
            #expect(pair.same("UPDATE t SET id = 2 WHERE id = 1").contains("UNIQUE"))
            pair.same("UPDATE t SET id = 80 WHERE id = 1 RETURNING *")
            pair.same("UPDATE t SET c = c + 100 WHERE a > 25 RETURNING id, c")
            pair.same("DELETE FROM t WHERE id IN (2, 3) RETURNING id")
            // Without a key: a NULL primary key on the WITHOUT ROWID table, the next rowid on the other.
            pair.same("INSERT INTO t(a) VALUES (9)")
            pair.same("SELECT last_insert_rowid()")
            try pair.sameTable()
            try pair.db.step()
            try pair.sameTable()
            try pair.runInOneTransaction(["UPDATE t SET a = -a WHERE id >= 4", "INSERT INTO t(id, a) VALUES (95, 1)", "DELETE FROM t WHERE id = 5"])
            try pair.sameTable()
            try pair.finish()
        }
    }

    /// Keys of every type, a composite key whose column collation (NOCASE) differs from the key's
    /// (BINARY: 'a' and 'A' are two rows), moved two by two: nothing is skipped or moved twice,
    /// reads see every row at every step, cleanup leaves nothing and the source table goes.
    @Test(arguments: Placement.available)
    func everyKeyMovesOnceInKeyOrder(placement: Placement) throws {
        let box = Sandbox()
        let files = placement.files(in: box, table: "kv", sameFileTable: "kv_legacy")
        let cipher = files.cipher, appPath = files.appPath, sourceTable = files.sourceTable
        let keys: [Value] = [.integer(-5), .integer(0), .real(0.5), .real(0.5000000000000001), .text(""), .text("A"), .text("a"), .text("B"),
                             .text("b "), .text("é"), .blob([]), .blob([0]), .blob([0, 0])]
        let source = try files.openSource()
        try source.execute("CREATE TABLE \(sourceTable)(k COLLATE NOCASE, n INTEGER, v TEXT, PRIMARY KEY (k COLLATE BINARY, n)) WITHOUT ROWID")
        var expected: [[Value]] = []
        for (index, key) in keys.enumerated() {
            for n in [1, 2] {
                try source.execute("INSERT INTO \(sourceTable) VALUES (?, ?, ?)", [key, Int64(n), "v\(index)-\(n)"])
                expected.append([key, .integer(Int64(n)), .text("v\(index)-\(n)")])
            }
        }
        source.close()
        let db = try FerryDatabase(path: appPath, configuration: DatabaseConfiguration(cipher: cipher), plan: files.plan(target: "kv"),
                                   options: .fixedBatches(of: 2))
        defer { db.close() }
        // A write moves one of two rows whose keys tie under the column's collation (and deletes
        // it): the other stays pending.
        try db.write { db throws(FerryError) in try db.execute("DELETE FROM kv WHERE k = 'a' COLLATE BINARY AND n = 1") }
        expected.removeAll { $0[0] == .text("a") && $0[1] == .integer(1) }
        let read = "SELECT k, n, v FROM kv ORDER BY v"
        let sortedExpected = expected.sorted { "\($0[2])" < "\($1[2])" }
        func rows() throws -> [[Value]] { try db.read { db throws(FerryError) in try db.fetchAll(read).map(\.values) } }
        var steps = 0
        while try db.progress().tables.first?.state != .finished {
            #expect(try rows() == sortedExpected, "after \(steps) step(s)")
            // The row the app deleted after it moved is an edit of the app's (recorded by its key),
            // not a missing row; nothing else differs.
            let report = try #require(try db.verify().tables.first)
            #expect(report.rowsMissing == 0 && report.rowsEditedByApp == 1 && report.rowsDiffering == 0 && report.rowsUnaccounted == 0, "\(report)")
            try db.step()
            steps += 1
        }
        #expect(steps == (expected.count + 1) / 2 + 1)
        try db.migrateAllBlocking()
        #expect(try rows() == sortedExpected)
        #expect(try db.verify().isConsistent)
        // Every source row moved: the one the app's delete moved ahead (then deleted) included.
        #expect(try db.progress().tables.first?.rowsMoved == Int64(expected.count + 1))
        #expect(try db.pool.read { try $0.scalar("SELECT count(*) FROM kv", as: Int.self) } == expected.count)
        let sourceLeft = try files.openSource()
        defer { sourceLeft.close() }
        #expect(try sourceLeft.scalar("SELECT count(*) FROM sqlite_master WHERE name = ?", [sourceTable], as: Int.self) == 0)
    }

    /// Two filtered mappings split one source without rowid: each target gets its rows, writes move
    /// pending rows ahead by key, and the filtered cleanup deletes the moved rows in key-ordered
    /// chunks, leaving the rows no filter takes.
    @Test func filteredSplitAndChunkedCleanup() throws {
        let box = Sandbox()
        let sourcePath = box.path("legacy.db")
        let source = try Connection(path: sourcePath)
        try source.execute("CREATE TABLE m(owner TEXT, seq INTEGER, body TEXT, PRIMARY KEY (owner, seq)) WITHOUT ROWID")
        for owner in ["ann", "bob", "cy"] {
            for seq in 1...7 { try source.execute("INSERT INTO m VALUES (?, ?, ?)", [owner, Int64(seq), "\(owner)\(seq)"]) }
        }
        source.close()
        let plan = MigrationPlan(sources: [MigrationSource(.file(sourcePath), tables: [
            TableMapping(target: "ann_m", source: "m", filter: "owner = 'ann'"),
            TableMapping(target: "bob_m", source: "m", filter: "owner = 'bob'"),
        ])])
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan, options: .fixedBatches(of: 3))
        defer { db.close() }
        try db.step()
        try db.write { db throws(FerryError) in
            try db.execute("UPDATE bob_m SET body = 'moved ahead' WHERE seq = 6")
            try db.execute("DELETE FROM ann_m WHERE seq = 7")
        }
        let counts = try db.read { db throws(FerryError) in try db.fetchAll("SELECT (SELECT count(*) FROM ann_m), (SELECT count(*) FROM bob_m)").map(\.values) }
        #expect(counts == [[.integer(6), .integer(7)]])
        try db.migrateAllBlocking()
        #expect(try db.read { db throws(FerryError) in try db.fetchAll("SELECT seq, body FROM bob_m WHERE seq >= 5 ORDER BY seq").map(\.values) }
                == [[.integer(5), .text("bob5")], [.integer(6), .text("moved ahead")], [.integer(7), .text("bob7")]])
        #expect(try db.verify().isConsistent)
        let left = try Connection(path: sourcePath)
        defer { left.close() }
        #expect(try left.fetchAll("SELECT DISTINCT owner FROM m").map { try $0.get(0, as: String.self) } == ["cy"])
        #expect(try left.scalar("SELECT count(*) FROM m", as: Int.self) == 7)
    }

    /// A target row there before the migration wins over the source row with its key; the source
    /// row is quarantined with its row key, and `verify` counts it as such.
    @Test func aSourceRowWhoseKeyIsTakenIsQuarantined() throws {
        let pair = try Pair(placement: .otherFile, rows: SchemaStatementTests.rows, appSchema: ["INSERT OR REPLACE INTO t VALUES (3, 333, 'mine', 0)"],
                            sourceOptions: "WITHOUT ROWID", targetOptions: "WITHOUT ROWID", stepFirst: false)
        try pair.db.migrateAllBlocking()
        try pair.sameTable()
        let quarantined = try pair.db.pool.read { try $0.fetchAll("SELECT typeof(ferry_source_rowid), id, a FROM ferry_quarantine_t").map(\.values) }
        #expect(quarantined == [[.text("blob"), .integer(3), .integer(30)]])
        #expect(try pair.db.verify().isConsistent)
    }
}
