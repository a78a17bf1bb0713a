import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// `SourceCursor`, the one walk over a source table in its order that moves, cleanup's count and
/// deletes, and `verify` share: the same answers for a rowid source and for a source without
/// rowid holding the same rows (in primary-key order, under the key's collation).
@Suite(.timeLimit(.minutes(2)))
struct SourceCursorTests {
    enum Kind: CaseIterable { case rowid, withoutRowid }

    /// 300 rows, of which the filter (`a % 3 <> 0`) matches 200. Without rowid, the primary key is
    /// `(g, n)` with `g` under NOCASE, so rows sort by group regardless of case.
    static let rows = 300
    static let matching = 200

    func database(_ kind: Kind, batchRows: Int = 16) throws -> (db: FerryDatabase, box: Sandbox) {
        let box = Sandbox()
        let legacy = box.path("legacy.db")
        let source = try Connection(path: legacy)
        switch kind {
        case .rowid:
            try source.execute("CREATE TABLE s(id INTEGER PRIMARY KEY, g TEXT, n INTEGER, a INTEGER)")
        case .withoutRowid:
            try source.execute("CREATE TABLE s(id INTEGER, g TEXT COLLATE NOCASE, n INTEGER, a INTEGER, PRIMARY KEY (g, n)) WITHOUT ROWID")
        }
        try source.execute("""
            WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < \(Self.rows))
            INSERT INTO s(id, g, n, a) SELECT i, CASE i % 4 WHEN 0 THEN 'b' WHEN 1 THEN 'A' WHEN 2 THEN 'a2' ELSE 'B3' END, i, i FROM r
            """)
        source.close()
        let plan = MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [TableMapping(target: "t", source: "s", filter: "a % 3 <> 0")])])
        var options = FerryDatabase.Options()
        options.fixedBatchRows = batchRows
        return (try FerryDatabase(path: box.path("app.db"), plan: plan, options: options), box)
    }

    func cursor(_ db: FerryDatabase) throws -> SourceCursor {
        SourceCursor(try #require(db.engine.migratingMappings.first))
    }

    /// Span after span of `n` matching rows: every matching row once, in increasing order.
    @Test(arguments: Kind.allCases, [1, 7, 64])
    func spansOfNRowsVisitEveryMatchingRowOnce(kind: Kind, n: Int) throws {
        let (db, box) = try database(kind)
        defer { db.close(); _ = box }
        let cursor = try cursor(db)
        let (visited, counts) = try db.pool.read { c throws(FerryError) -> ([Int64], [Int64]) in
            var span = cursor.everyRow
            var ids: [Int64] = []
            var counts: [Int64] = []
            while let last = try cursor.lastOfFirst(n, in: span, on: c) {
                let range = cursor.matching(span.through(last))
                counts.append(try sqlite(c.scalar("SELECT count(*) FROM \(cursor.scan) WHERE \(range.sql)", .positional(range.arguments))) ?? 0)
                ids += try sqlite(c.fetchAll("SELECT id FROM \(cursor.scan) WHERE \(range.sql) ORDER BY \(cursor.mapping.sourceOrder)",
                                             .positional(range.arguments))).map { row throws(FerryError) in try sqlite(row.column(0)) }
                span = span.after(last)
            }
            return (ids, counts)
        }
        #expect(visited.count == Self.matching)
        #expect(Set(visited).count == Self.matching)
        #expect(visited.allSatisfy { $0 % 3 != 0 })
        #expect(counts.dropLast().allSatisfy { $0 == Int64(n) })
        #expect(counts.count == (Self.matching + n - 1) / n)
        if kind == .rowid { #expect(visited == visited.sorted()) }
        #expect(try db.pool.read { c throws(FerryError) in try cursor.matchingCount(in: cursor.everyRow, on: c) } == Int64(Self.matching))
    }

    /// `countFirst` counts what `lastOfFirst` walks, and names the same last row when it counted `n`.
    @Test(arguments: Kind.allCases)
    func countFirstAgreesWithLastOfFirst(kind: Kind) throws {
        let (db, box) = try database(kind)
        defer { db.close(); _ = box }
        let cursor = try cursor(db)
        try db.pool.read { c throws(FerryError) in
            var span = cursor.everyRow
            var total: Int64 = 0
            while true {
                let (count, last) = try cursor.countFirst(50, in: span, on: c)
                total += count
                guard count == 50 else { break }
                guard last != nil else {
                    Issue.record("a count of 50 names no last row")
                    break
                }
                #expect(last == (try cursor.lastOfFirst(50, in: span, on: c)))
                span = span.after(last)
            }
            #expect(total == Int64(Self.matching))
        }
    }

    /// After some batches, the rows the cursor passed and those it has not split the matching rows,
    /// and the passed ones are exactly the rows that moved.
    @Test(arguments: Kind.allCases)
    func passedAndNotPassedSplitTheSource(kind: Kind) throws {
        let (db, box) = try database(kind)
        defer { db.close(); _ = box }
        for _ in 0..<3 { try db.step() }
        let cursor = try cursor(db)
        let record = cursor.mapping.record
        #expect(record.rowsMoved == 48)
        try db.pool.read { c throws(FerryError) in
            let passed = try cursor.matchingCount(in: cursor.passed(record), on: c)
            let pending = try cursor.notPassed(record).map { span throws(FerryError) in try cursor.matchingCount(in: span, on: c) } ?? 0
            #expect(passed == record.rowsMoved)
            #expect(passed + pending == Int64(Self.matching))
        }
        try db.migrateAllBlocking()
        #expect(try db.pool.read { try $0.scalar("SELECT count(*) FROM t", as: Int.self) } == Self.matching)
    }

    /// Moved in batches of 7 and cleaned in chunks of 7, the source keeps exactly the rows the
    /// filter left out, for both kinds of source.
    @Test(arguments: Kind.allCases)
    func cleanupLeavesExactlyTheRowsTheFilterLeftOut(kind: Kind) throws {
        let (db, box) = try database(kind, batchRows: 7)
        try db.migrateAllBlocking()
        db.close()
        let source = try Connection(path: box.path("legacy.db"))
        #expect(try source.scalar("SELECT count(*) FROM s", as: Int.self) == Self.rows - Self.matching)
        #expect(try source.scalar("SELECT count(*) FROM s WHERE a % 3 <> 0", as: Int.self) == 0)
        let target = try Connection(path: box.path("app.db"))
        #expect(try target.scalar("SELECT count(*) FROM t WHERE a % 3 <> 0", as: Int.self) == Self.matching)
    }
}
