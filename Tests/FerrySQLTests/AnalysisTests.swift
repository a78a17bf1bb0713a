import Testing
@testable import FerrySQL

private func analyze(_ sql: String) throws -> StatementAnalysis { StatementAnalysis(try Parser.parseStatement(sql)) }

@Suite struct AnalysisTests {
    @Test func readsAndWrites() throws {
        let a = try analyze("INSERT INTO log SELECT * FROM t JOIN main.u ON t.id = u.id WHERE x IN other AND EXISTS (SELECT 1 FROM v)")
        #expect(a.writtenTables.map(\.description) == ["log"])
        #expect(a.readTables.map(\.description) == ["t", "main.u", "other", "v"])
        let u = try analyze("UPDATE t SET a = (SELECT max(a) FROM s) FROM r WHERE t.id = r.id RETURNING a")
        #expect(u.writtenTables.map(\.description) == ["t"])
        #expect(Set(u.readTables.map(\.description)) == ["s", "r"])
        let d = try analyze("DELETE FROM t WHERE id IN (SELECT id FROM t)")
        #expect(d.writtenTables.map(\.description) == ["t"])
        #expect(d.readTables.map(\.description) == ["t"])
    }

    @Test func commonTableExpressionsShadowTables() throws {
        let a = try analyze("WITH t AS (SELECT * FROM t2), r AS (SELECT * FROM r UNION ALL SELECT * FROM t) SELECT * FROM t, main.t, (WITH q AS (SELECT 1) SELECT * FROM q), q")
        let resolved = a.tables.map { "\($0.name)=\($0.resolution == .table ? "table" : "cte")" }
        #expect(resolved == ["t2=table", "r=cte", "t=cte", "t=cte", "main.t=table", "q=cte", "q=table"])
    }

    @Test func columnsBindToFromItems() throws {
        let a = try analyze("SELECT x.a, b, main.u.c, (SELECT d FROM v) FROM t AS x, main.u WHERE x.a = 1")
        func binding(_ name: String) -> ColumnBinding? { a.columns.first { $0.reference.column.name == name }?.binding }
        guard case .item(let xa)? = binding("a"), case .item(let uc)? = binding("c"), case .item(let vd)? = binding("d") else {
            Issue.record("unbound"); return
        }
        #expect(a.fromItems[xa].exposedName?.name == "x")
        #expect(a.fromItems[uc].exposedName?.name == "u")
        #expect(a.fromItems[vd].exposedName?.name == "v")
        if case .candidates(let c)? = binding("b") { #expect(c.count == 2) } else { Issue.record("b should have two candidates") }
        let trigger = try analyze("CREATE TRIGGER tr AFTER UPDATE ON t BEGIN UPDATE log SET v = new.v WHERE id = old.id; END")
        #expect(trigger.columns.contains { $0.binding == .triggerRow("new") })
        #expect(trigger.tables.map(\.kind) == [.schema, .update])
        #expect(trigger.tables[1].context == .triggerBody)
        let upsert = try analyze("INSERT INTO t(a) VALUES (1) ON CONFLICT (a) DO UPDATE SET b = excluded.b")
        #expect(upsert.columns.contains { $0.binding == .excluded })
    }

    @Test func schemaStatementsNameTheirObjects() throws {
        #expect(try analyze("CREATE INDEX i ON t(a)").tables.map { "\($0.name):\($0.kind)" } == ["t:schema"])
        #expect(try analyze("DROP TABLE IF EXISTS s.t").tables.map(\.name.description) == ["s.t"])
        #expect(try analyze("CREATE VIEW v AS SELECT * FROM t").tables.map { "\($0.name):\($0.kind)" } == ["v:schema", "t:read"])
        #expect(try analyze("ALTER TABLE t ADD COLUMN c REFERENCES p").tables.map(\.name.description) == ["t", "p"])
        #expect(try analyze("PRAGMA table_info(t)").tables.map { "\($0.name):\($0.kind)" } == ["t:maintenance"])
        // A quoted argument names the table it spells.
        for (pragma, table) in [("PRAGMA table_list('T')", "T"), ("PRAGMA table_info(\"a b\")", "a b"), ("PRAGMA table_info('it''s')", "it's"),
                                ("PRAGMA table_info([x])", "x"), ("PRAGMA index_list(`y`)", "y")] {
            #expect(try analyze(pragma).tables.map(\.name.name.name) == [table], "\(pragma)")
        }
    }
}
