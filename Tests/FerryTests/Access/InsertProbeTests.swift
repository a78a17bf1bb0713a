import FerrySQLite
import FerryTestSupport
import Foundation
import Testing
@testable import Ferry

/// The insert probe (`InsertProbe`): an app insert into a migrating table that no pending row can
/// conflict with compiles without the source, so it begins no read transaction on the source
/// file; one that may conflict looks the source up through the probe, with the outcome of the
/// finished table (`RedirectTriggerConditionTests`, `PendingRowidRangeTests`). The procedure is
/// Ferry's alone.
@Suite(.timeLimit(.minutes(2))) struct InsertProbeTests {
    static let rows: [(Int, Int, String?, Int)] = (1...8).map { ($0, $0 * 10, "m\($0)", $0) }

    /// The schemas (by index) in which the app's `sql`, compiled on the writer as the app's
    /// statements are, begins a transaction (main, temp for Ferry's temp tables, and, when its
    /// triggers name it, the source), and the source's index.
    static func schemasOpened(by sql: String, in db: FerryDatabase) throws -> (opened: Set<Int>, source: Int) {
        let (opened, source) = try db.pool.writeWithoutTransaction { db throws(FerryError) -> (Set<Int>, Int?) in
            let schemas = try sqlite(db.fetchAll("PRAGMA database_list"))
            let source = schemas.first { (try? $0.get(1, as: String.self))?.hasPrefix("ferry_src_") == true }
            let program = try db.withStatementTrust(.untrusted) { () throws(FerryError) in try sqlite(db.fetchAll("EXPLAIN \(sql)")) }
            var opened = Set<Int>()
            for op in program where try sqlite(op.column(1, as: String.self)) == "Transaction" { opened.insert(try sqlite(op.column(2, as: Int.self))) }
            return (opened, try source.map { row throws(FerryError) in try sqlite(row.column(0, as: Int.self)) })
        }
        return (opened, try #require(source))
    }

    /// Cross-file (plain and encrypted), before and after a step: an insert whose rowid no source
    /// row has, or an automatic one once no pending row lies above the target's, opens main alone.
    /// A table with a unique key fed from the source looks every insert's key up in the source:
    /// there the insert opens it, as it must (and as every insert did before the probe).
    @Test(arguments: SchemaStatementTests.Placement.available.filter { $0 != .sameFile }, [false, true])
    func anInsertNoPendingRowCanConflictWithLeavesTheSourceClosed(placement: SchemaStatementTests.Placement, stepFirst: Bool) throws {
        let pair = try SchemaStatementTests.Pair(placement: placement, rows: Self.rows, stepFirst: stepFirst)
        // The first automatic rowid moves row 8 ahead of it (through the probe).
        #expect(pair.same("INSERT INTO t(a) VALUES (1) RETURNING id") == "[[9]]")
        let automatic = try Self.schemasOpened(by: "INSERT INTO main.t(a) VALUES (2)", in: pair.db)
        #expect(automatic.opened.contains(0) && !automatic.opened.contains(automatic.source), "\(automatic)")
        let outside = try Self.schemasOpened(by: "INSERT INTO main.t(id, a) VALUES (100, 2)", in: pair.db)
        #expect(outside.opened.contains(0) && !outside.opened.contains(outside.source), "\(outside)")
        // The same inserts run as on the finished table, and one with a pending rowid conflicts.
        #expect(pair.same("INSERT INTO t(a) VALUES (2) RETURNING id") == "[[10]]")
        #expect(pair.same("INSERT INTO t(id, a) VALUES (5, 0)").contains("UNIQUE"))
        try pair.runInOneTransaction(["INSERT INTO t(a) VALUES (3)", "INSERT INTO t(id, a) VALUES (-7, 3)"])
        try pair.sameTable()

        let keyed = try SchemaStatementTests.Pair(placement: placement, rows: Self.rows, appSchema: ["CREATE UNIQUE INDEX t_c ON t(c)"],
                                                  stepFirst: stepFirst)
        keyed.same("INSERT INTO t(a, c) VALUES (1, 100)")
        let lookedUp = try Self.schemasOpened(by: "INSERT INTO main.t(a, c) VALUES (2, 101)", in: keyed.db)
        #expect(lookedUp.opened.contains(lookedUp.source), "\(lookedUp)")
        try pair.finish()
        try keyed.finish()
    }

    /// The procedure is defined once per connection: defining a function makes SQLite compile every
    /// statement of the connection again, and the pool prepares a connection before each use (the
    /// first build defined it there each time, and an empty read took 6.5 µs instead of 4).
    @Test func usingAConnectionAgainCompilesNothingAgain() throws {
        let pair = try SchemaStatementTests.Pair(placement: .otherFile, rows: Self.rows, stepFirst: true)
        try pair.db.write { db throws(FerryError) in try db.execute("CREATE TABLE other(x)") }
        let insert = "INSERT INTO other VALUES (1)"
        for _ in 0..<3 { try pair.db.write { db throws(FerryError) in try db.execute(insert) } }
        let recompiled = try pair.db.pool.writeWithoutTransaction { db throws(FerryError) in
            try db.withStatementTrust(.untrusted) { () throws(FerryError) in try sqlite(db.cachedStatement(insert)).recompileCount }
        }
        #expect(recompiled == 0)
        #expect(try pair.db.read { try $0.scalar("SELECT count(*) FROM other", as: Int.self) } == 3)
    }

    /// The app cannot call the procedure: not in a statement, a view or a trigger of its own.
    @Test func theAppCannotCallTheProcedure() throws {
        let pair = try SchemaStatementTests.Pair(placement: .otherFile, rows: Self.rows, stepFirst: true)
        func expectDenied(_ sql: String, sourceLocation: SourceLocation = #_sourceLocation) {
            do {
                try pair.db.write { db throws(FerryError) in try db.execute(sql) }
                Issue.record("accepted: \(sql)", sourceLocation: sourceLocation)
            } catch {
                guard case .accessDenied(let object, _, let reason) = error else {
                    Issue.record("\(error)", sourceLocation: sourceLocation)
                    return
                }
                #expect(object.contains(MigratingTableSQL.insertProbeProcedure), "\(object)", sourceLocation: sourceLocation)
                #expect(reason.contains("only its redirect triggers"), sourceLocation: sourceLocation)
            }
        }
        expectDenied("SELECT ferry_redirect_probe('t', 5)")
        expectDenied("SELECT FERRY_REDIRECT_PROBE('t', 5)")
        try pair.db.write { db throws(FerryError) in
            try db.execute("CREATE TABLE other(x)")
            try db.execute("CREATE VIEW probing AS SELECT ferry_redirect_probe('t', 5) AS p")
            try db.execute("CREATE TRIGGER other_probes AFTER INSERT ON other BEGIN SELECT ferry_redirect_probe('t', NEW.x); END")
        }
        expectDenied("SELECT * FROM probing")
        expectDenied("INSERT INTO other VALUES (5)")
        // Nothing moved: row 5 is still pending, and the table is the finished one's.
        #expect(try pair.db.read { try $0.scalar("SELECT count(*) FROM ferry_migration_moved", as: Int.self) } == 0)
        try pair.sameTable()
        try pair.finish()
    }

    /// The policy, request by request: the procedure runs from Ferry's redirect triggers in the
    /// app's statements, is compiled out of Ferry's own (their inserts into a target are moves,
    /// with the triggers suspended), and is denied to everything else.
    @Test func policyDecisions() {
        let policy = AccessPolicy(targetPath: "/nonexistent/app.db", sourcePaths: { [] })
        let call = { (accessor: String?) in AuthorizerRequest(action: .function, second: "ferry_redirect_probe", accessor: accessor) }
        #expect(policy.decide(call("ferry_redirect_insert_t"), trust: .untrusted) == .allow)
        #expect(policy.decide(call("ferry_redirect_insert_t"), trust: .trusted) == .ignore)
        #expect(policy.decide(call(nil), trust: .trusted) == .ignore)
        #expect(policy.decide(call(nil), trust: .untrusted) != .allow)
        #expect(policy.decide(call("app_trigger"), trust: .untrusted) != .allow)
        #expect(policy.decide(AuthorizerRequest(action: .function, second: "lower"), trust: .trusted) == .allow)
    }
}
