import FerrySQLite
import FerryTestSupport
import Testing
@testable import Ferry

/// The redirector hands the connection a typed `StatementPlan` for each statement: what runs
/// first (`Preparation`), the statement, and what follows (`SchemaEffect`). These tests read the
/// plans themselves; the suites of each statement kind check their results against the finished table.
@Suite(.timeLimit(.minutes(2))) struct StatementPlanTests {
    typealias Pair = SchemaStatementTests.Pair
    static let rows: [(Int, Int, String?, Int)] = (1...6).map { ($0, $0 * 10, "m\($0)", $0) }

    /// The plan of `sql` on `pair`'s writer (not run).
    func plan(_ pair: Pair, _ sql: String) throws -> StatementPlan {
        try pair.db.write { db throws(FerryError) in try db.redirector.planUncached(sql) }
    }

    @Test(arguments: SchemaStatementTests.Placement.available)
    func updatesAndDeletesMovePendingRowsFirstAndInsertsDoNot(placement: SchemaStatementTests.Placement) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, stepFirst: true)
        for sql in ["UPDATE t SET a = a + 1 WHERE b = 'm5'", "DELETE FROM t WHERE a > 30", "UPDATE t SET a = 0 FROM (SELECT 1) WHERE id = 6"] {
            let plan = try plan(pair, sql)
            guard case .moveRows(let moves)? = plan.preparation else {
                Issue.record("\(sql): \(String(describing: plan.preparation))")
                continue
            }
            #expect(moves.listing.sql.hasPrefix("INSERT OR IGNORE INTO temp.ferry_move_rows(r) "), "\(sql)")
            #expect(moves.moves.last?.sql == "DELETE FROM temp.ferry_move_rows", "\(sql)")
            #expect(plan.effects.isEmpty && !plan.isUnchanged && plan.migratingTables == ["t"], "\(sql)")
        }
        let insert = try plan(pair, "INSERT INTO t(a) VALUES (1)")
        #expect(insert.preparation == nil && insert.migratingTables == ["t"])
        // A point write keeps its moves for keys above the cursor, and names the shortcut for the others.
        let point = try plan(pair, "UPDATE t SET a = 1 WHERE id = ?1")
        #expect(point.keyShortcut != nil && point.preparation != nil)
        // Unrelated statements run as written.
        let other = try plan(pair, "SELECT 1")
        #expect(other.isUnchanged && other.preparation == nil && other.migratingTables.isEmpty)
        // The plans do what they say: the write changes the finished table's rows.
        let (ferry, finished) = pair.run("UPDATE t SET a = a + 1 WHERE a > 30 RETURNING id, a")
        #expect(ferry == finished)
        try pair.finish()
    }

    @Test(arguments: SchemaStatementTests.Placement.available)
    func schemaStatementsCarryTheirEffects(placement: SchemaStatementTests.Placement) throws {
        let pair = try Pair(placement: placement, rows: Self.rows, stepFirst: false)
        let added = try plan(pair, "ALTER TABLE t ADD COLUMN d TEXT")
        #expect(added.effects == [.columnAdded(table: "t", column: "d"), .uniqueKeysChanged, .schemaChanged])
        #expect(added.addedColumn?.column == "d" && added.preparation == nil)
        let renamed = try plan(pair, "ALTER TABLE t RENAME COLUMN a TO z")
        #expect(renamed.renamedColumn?.old == "a" && renamed.renamedColumn?.new == "z")
        #expect(renamed.has(.triggersChanged) && renamed.has(.schemaChanged))
        let dropped = try plan(pair, "ALTER TABLE t DROP COLUMN c")
        guard case .dropRedirectTriggers(let drops)? = dropped.preparation else {
            Issue.record("\(String(describing: dropped.preparation))")
            return
        }
        #expect(drops.allSatisfy { $0.sql.hasPrefix("DROP TRIGGER IF EXISTS temp.") } && drops.count == 3)
        #expect(dropped.has(.columnDropped))
        let unique = try plan(pair, "CREATE UNIQUE INDEX tb ON t(b)")
        if case .moveRows? = unique.preparation {} else { Issue.record("a unique index moves the rows whose key is shared first") }
        #expect(unique.effects == [.uniqueKeysChanged])
        let index = try plan(pair, "CREATE INDEX ta ON t(a)")
        #expect(index.preparation == nil && index.effects.isEmpty)
        let trigger = try plan(pair, "CREATE TRIGGER tt AFTER INSERT ON t BEGIN SELECT 1; END")
        #expect(trigger.effects == [.triggersChanged])
        let view = try plan(pair, "CREATE VIEW v AS SELECT a FROM t")
        #expect(view.effects == [.schemaChanged])
        let ended = try plan(pair, "DROP TABLE t")
        guard case .endMigration(let table, let statements)? = ended.preparation else {
            Issue.record("\(String(describing: ended.preparation))")
            return
        }
        #expect(table == "t" && statements.first?.sql.hasPrefix("DROP TABLE main.") == true)
        // The plans run: each effect is acted on (the column is recorded, the views rebuilt).
        pair.run("ALTER TABLE t ADD COLUMN d TEXT")
        let (ferry, finished) = pair.run("SELECT id, d FROM t ORDER BY id")
        #expect(ferry == finished)
        try pair.finish()
    }

    /// A view's plan names the migrating tables it reads, through other views too: a statement on
    /// it is refused when their source is missing (see `SourceAvailabilityTests`).
    @Test func viewsNameTheMigratingTablesTheyReadThroughOtherViews() throws {
        let pair = try Pair(placement: .otherFile, rows: Self.rows, stepFirst: false)
        try pair.db.write { db throws(FerryError) in
            try db.execute("CREATE TABLE plain(x)")
            try db.execute("CREATE VIEW v1 AS SELECT a FROM t")
            try db.execute("CREATE VIEW v2 AS SELECT a FROM v1 UNION ALL SELECT x FROM plain")
            try db.execute("CREATE VIEW v3 AS SELECT * FROM v2")
        }
        #expect(try plan(pair, "SELECT * FROM v3").migratingTables == ["t"])
        #expect(try plan(pair, "SELECT * FROM v2, plain").migratingTables == ["t"])
        #expect(try plan(pair, "SELECT * FROM plain").migratingTables.isEmpty)
        #expect(try plan(pair, "PRAGMA foreign_key_check").migratingTables.isEmpty)
    }
}
