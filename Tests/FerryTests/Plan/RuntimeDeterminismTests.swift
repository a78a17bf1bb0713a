import FerryTestSupport
import FerrySQLite
import Foundation
import Testing
@_spi(Benchmarks) @testable import Ferry

/// A filter whose date and time functions get a value that reads the clock is refused when it is
/// evaluated, however the value got there (SQLite's own rule for CHECK constraints and indexes),
/// not only when `'now'` is written as a literal: at registration (which evaluates the filter over
/// every row), and at a step when a row gets such a value later.
@Suite(.timeLimit(.minutes(2))) struct RuntimeDeterminismTests {
    private func source(_ box: Sandbox, rows: Int = 20, clockRows: Int) throws -> String {
        let path = box.path("legacy.db")
        let db = try Connection(path: path)
        defer { db.close() }
        try db.execute("CREATE TABLE m(id INTEGER PRIMARY KEY, a TEXT, b INTEGER)")
        try db.execute("""
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?1)
            INSERT INTO m SELECT x, CASE WHEN x <= ?2 THEN 'now' ELSE '2024-01-0' || (x % 9 + 1) END, x % 2 FROM n
            """, [.integer(Int64(rows)), .integer(Int64(clockRows))])
        return path
    }

    private func plan(_ legacy: String, filter: String) -> MigrationPlan {
        MigrationPlan(sources: [MigrationSource(.file(legacy), tables: [TableMapping(target: "m", source: "m", filter: filter)])])
    }

    private func isClockRefusal(_ error: any Error) -> Bool {
        guard case FerryError.invalidFilter(_, let reason) = error else { return false }
        return reason.contains("clock")
    }

    /// The filter: a column holding 'now' in most rows, evaluated through strftime.
    @Test func aColumnHoldingNowRefusesTheRegistration() throws {
        let box = Sandbox()
        let legacy = try source(box, clockRows: 15)
        #expect(performing: {
            _ = try FerryDatabase(path: box.path("app.db"), plan: plan(legacy, filter: "(strftime('%s', a) % 2 = 0) = (b = 1)"))
        }, throws: isClockRefusal)
        // Nothing was registered.
        let raw = try Connection(path: box.path("app.db"))
        #expect(try raw.tableExists("ferry_migration_tables") == false || raw.scalar("SELECT count(*) FROM ferry_migration_tables", as: Int.self) == 0)
    }

    @Test(arguments: ["date(+'now') > a", "date('no' || 'w') > a", "julianday(char(110, 111, 119)) > 0", "datetime(a) > datetime(upper(' now'))"])
    func aComputedClockValueRefusesTheRegistration(filter: String) throws {
        let box = Sandbox()
        let legacy = try source(box, clockRows: 0)
        #expect(performing: { _ = try FerryDatabase(path: box.path("app.db"), plan: plan(legacy, filter: filter)) }, throws: isClockRefusal)
    }

    /// A row that gets 'now' after the registration (the source edited behind Ferry's back) fails
    /// the step that reaches it, with the typed error, and moves nothing.
    @Test func aRowHoldingNowLaterFailsTheStepAndMovesNothing() throws {
        let box = Sandbox()
        let legacy = try source(box, clockRows: 0)
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan(legacy, filter: "date(a) >= '2024-01-05'"), options: .fixedBatches(of: 5))
        defer { db.close() }
        let raw = try Connection(path: legacy)
        try raw.execute("UPDATE m SET a = 'NOW' WHERE id = 3")
        raw.close()
        #expect(performing: { while try db.step() != nil {} }, throws: isClockRefusal)
        #expect(try db.progress().tables.first?.rowsMoved == 0)
    }

    /// Deterministic date filters work as before.
    @Test func aDeterministicDateFilterMigrates() throws {
        let box = Sandbox()
        let legacy = try source(box, clockRows: 0)
        let db = try FerryDatabase(path: box.path("app.db"), plan: plan(legacy, filter: "date(a, '+1 day') > '2024-01-05'"), options: .fixedBatches(of: 5))
        defer { db.close() }
        let expected = try db.read { try $0.scalar("SELECT count(*) FROM m", as: Int.self) }
        try db.migrateAllBlocking()
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM m", as: Int.self) } == expected)
        #expect(expected ?? 0 > 0)
    }
}
