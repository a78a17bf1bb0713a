import Testing
@testable import FerrySQLite

/// A statement's own counters, which benchmarks and tests read as work that does not depend on the
/// clock, and its allocation-free single-integer read (which Ferry runs before every read of a
/// migrating table).
@Suite(.timeLimit(.minutes(1)))
struct StatementCounterTests {
    @Test func virtualMachineStepsGrowWithTheRowsAStatementVisits() throws {
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, x); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) INSERT INTO t SELECT i, i FROM n")
        let statement = try db.prepare("SELECT count(*) FROM t WHERE id <= ?1 AND x >= 0")
        #expect(statement.virtualMachineSteps == 0)
        _ = try statement.fetchOne(.positional([.integer(10)]))
        let ten = statement.virtualMachineSteps
        _ = try statement.fetchOne(.positional([.integer(1000)]))
        let thousand = statement.virtualMachineSteps - ten
        // Cumulative over runs; each visited row costs a few operations.
        #expect(ten > 10)
        #expect(thousand > 50 * ten)
    }

    @Test func recompileCountCountsTheCompilesASchemaChangeCauses() throws {
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE t(x)")
        let statement = try db.prepare("SELECT x FROM t")
        _ = try statement.fetchAll()
        #expect(statement.recompileCount == 0)
        try db.execute("CREATE TABLE u(y)")  // any schema change expires the connection's statements
        _ = try statement.fetchAll()
        #expect(statement.recompileCount == 1)
        _ = try statement.fetchAll()
        #expect(statement.recompileCount == 1)
    }

    @Test func firstIntegerReadsTheFirstColumnOfTheFirstRow() throws {
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE t(x); INSERT INTO t VALUES (7), (3), ('12'), (NULL)")
        #expect(try db.prepare("SELECT x FROM t ORDER BY rowid").firstInteger() == 7)
        #expect(try db.prepare("SELECT x FROM t WHERE x = ?1").firstInteger(.positional([.integer(3)])) == 3)
        #expect(try db.prepare("SELECT x FROM t WHERE rowid = 3").firstInteger() == 12)  // SQLite's conversion of text
        #expect(try db.prepare("SELECT x FROM t WHERE rowid = 4").firstInteger() == 0)  // NULL reads 0, as sqlite3_column_int64
        #expect(try db.prepare("SELECT x FROM t WHERE 0").firstInteger() == nil)
        let version = try db.prepare("PRAGMA schema_version")
        let before = try #require(try version.firstInteger())
        try db.execute("CREATE TABLE u(y)")
        #expect(try version.firstInteger() == before + 1)  // runs again from the start each call
    }
}
