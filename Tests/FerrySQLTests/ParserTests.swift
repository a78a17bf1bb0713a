import Testing
@testable import FerrySQL

private func expr(_ sql: String) throws -> Expression { try Parser.parseExpression(sql) }
private func fully(_ sql: String) throws -> String {
    // Print with every operand parenthesized, to see how the parser grouped it.
    try Printer().print(expr(sql))
}
private func col(_ name: String) -> Expression { .column(ColumnReference(column: Identifier(name))) }
private func int(_ text: String) -> Expression { .literal(.integer(text)) }

@Suite struct ParserTests {
    @Test func precedenceFollowsParseY() throws {
        #expect(try expr("a OR b AND c") == .binary(col("a"), [BinaryTerm(.or, .binary(col("b"), [BinaryTerm(.and, col("c"))]))]))
        #expect(try expr("NOT a = b") == .unary(.not, .binary(col("a"), [BinaryTerm(.equal, col("b"))])))
        #expect(try expr("NOT a AND b") == .binary(.unary(.not, col("a")), [BinaryTerm(.and, col("b"))]))
        #expect(try expr("a = NOT b") == .binary(col("a"), [BinaryTerm(.equal, .unary(.not, col("b")))]))
        #expect(try expr("a < b = c") == .binary(.binary(col("a"), [BinaryTerm(.less, col("b"))]), [BinaryTerm(.equal, col("c"))]))
        #expect(try expr("a & b + c") == .binary(col("a"), [BinaryTerm(.bitAnd, .binary(col("b"), [BinaryTerm(.plus, col("c"))]))]))
        #expect(try expr("a + b * c || d") == .binary(col("a"), [BinaryTerm(.plus, .binary(col("b"), [BinaryTerm(.multiply, .binary(col("c"), [BinaryTerm(.concat, col("d"))]))]))]))
        #expect(try expr("-a COLLATE x") == .collate(.unary(.negate, col("a")), "x"))
        #expect(try expr("a || b COLLATE x") == .binary(col("a"), [BinaryTerm(.concat, .collate(col("b"), "x"))]))
        #expect(try expr("a -> b ->> c") == .binary(col("a"), [BinaryTerm(.extract, col("b")), BinaryTerm(.extractText, col("c"))]))
        #expect(try expr("a << 1 >> 2 | 3") == .binary(col("a"), [BinaryTerm(.shiftLeft, int("1")), BinaryTerm(.shiftRight, int("2")), BinaryTerm(.bitOr, int("3"))]))
    }

    @Test func postfixFormsShareTheEqualityLevel() throws {
        #expect(try expr("a = b LIKE c") == .like(LikeExpression(.binary(col("a"), [BinaryTerm(.equal, col("b"))]), .like, col("c"))))
        #expect(try expr("a NOT LIKE b < c ESCAPE d || e") == .like(LikeExpression(col("a"), negated: true, .like, .binary(col("b"), [BinaryTerm(.less, col("c"))]),
                                                                                 escape: .binary(col("d"), [BinaryTerm(.concat, col("e"))]))))
        #expect(try expr("a BETWEEN 1 AND 2 AND c") == .binary(.between(BetweenExpression(col("a"), lower: int("1"), upper: int("2"))), [BinaryTerm(.and, col("c"))]))
        #expect(try expr("a NOT NULL") == .nullTest(col("a"), isNull: false))
        #expect(try expr("a ISNULL = 0") == .binary(.nullTest(col("a"), isNull: true), [BinaryTerm(.equal, int("0"))]))
        #expect(try expr("a IS NOT DISTINCT FROM b") == .binary(col("a"), [BinaryTerm(.isNotDistinctFrom, col("b"))]))
        #expect(try expr("a IS NOT b") == .binary(col("a"), [BinaryTerm(.isNot, col("b"))]))
        #expect(try expr("a NOT IN (1, 2)") == .in(InExpression(col("a"), negated: true, .list([int("1"), int("2")]))))
        #expect(try expr("a IN main.t") == .in(InExpression(col("a"), .table(QualifiedName(schema: "main", "t"), location: .none))))
        #expect(try expr("a GLOB 'x*'") == .like(LikeExpression(col("a"), .glob, .literal(.string("x*")))))
    }

    @Test func primaries() throws {
        #expect(try expr("x'00ff'") == .literal(.blob("00ff")))
        #expect(try expr("'it''s'") == .literal(.string("it's")))
        #expect(try expr("TRUE") == .literal(.true))
        #expect(try expr("(1, 2)") == .row([int("1"), int("2")]))
        #expect(try expr("CAST(a AS VARCHAR(10))") == .cast(col("a"), TypeName("VARCHAR", arguments: ["10"])))
        #expect(try expr("s.t.c") == .column(ColumnReference(schema: "s", table: "t", column: "c")))
        #expect(try expr("count(DISTINCT a ORDER BY b) FILTER (WHERE c) OVER w") == .function(FunctionCall(
            name: "count", quantifier: .distinct, arguments: .list([col("a")]), orderBy: [OrderingTerm(col("b"))], filter: col("c"), over: .named("w"))))
        #expect(try expr("count(*)") == .function(FunctionCall(name: "count", arguments: .star)))
        #expect(try expr("RAISE(ABORT, 'no')") == .raise(.abort(.literal(.string("no")))))
        #expect(try expr("CASE WHEN a THEN 1 ELSE 2 END") == .case(CaseExpression(branches: [WhenThen(when: col("a"), then: int("1"))], otherwise: int("2"))))
        #expect(try expr("replace(a, 'b', 'c')") == .function(FunctionCall(name: "replace", arguments: .list([col("a"), .literal(.string("b")), .literal(.string("c"))]))))
        if case .function(let call) = try expr("sum(x) OVER (PARTITION BY a ORDER BY b ROWS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE TIES)") {
            #expect(call.over == .definition(WindowDefinition(partitionBy: [col("a")], orderBy: [OrderingTerm(col("b"))],
                                                             frame: FrameSpecification(unit: .rows, start: .preceding(int("1")), end: .currentRow, exclusion: .ties))))
        } else {
            Issue.record("expected a function")
        }
    }

    @Test func parametersGetSQLiteIndexes() throws {
        let statement = try Parser.parseStatement("SELECT ?, :a, ?5, ?, :a, @b, $c::d(x), ?2")
        guard case .select(let s) = statement, case .select(let core) = s.first else { Issue.record("shape"); return }
        let params = core.columns.compactMap { column -> Parameter? in
            if case .expression(.parameter(let p), _) = column { return p }
            return nil
        }
        #expect(params.map(\.index) == [1, 2, 5, 6, 2, 7, 8, 2])
        #expect(params.map(\.text) == ["?", ":a", "?5", "?", ":a", "@b", "$c::d(x)", "?2"])
        #expect(Printer(options: PrinterOptions(numberAnonymousParameters: true)).print(statement) == "SELECT ?1, :a, ?5, ?6, :a, @b, $c::d(x), ?2")
        #expect(throws: SQLSyntaxError.self) { try Parser.parseStatement("SELECT ?0") }
        #expect(throws: SQLSyntaxError.self) { try Parser.parseStatement("SELECT ?32767") }
        #expect(throws: SQLSyntaxError.self) { try Parser.parseStatement("SELECT #1") }
    }

    @Test func statementsOfEveryKind() throws {
        let ok = [
            "WITH RECURSIVE c(x) AS NOT MATERIALIZED (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5) SELECT * FROM c",
            "SELECT DISTINCT t.*, a AS x, b y FROM main.t AS t NATURAL LEFT OUTER JOIN u USING (a) CROSS JOIN v INDEXED BY i, w NOT INDEXED WHERE 1 GROUP BY a HAVING 1 WINDOW w AS (ORDER BY a) ORDER BY 1 COLLATE nocase DESC NULLS LAST LIMIT 1, 2",
            "SELECT * FROM json_each('[1]') AS j, (SELECT 1) s, (t1 JOIN t2 ON 1)",
            "INSERT OR REPLACE INTO main.t AS x (a, b) VALUES (1, 2), (3, 4) ON CONFLICT (a) WHERE a > 0 DO UPDATE SET b = excluded.b WHERE 1 ON CONFLICT DO NOTHING RETURNING *",
            "REPLACE INTO t DEFAULT VALUES",
            "INSERT INTO t SELECT * FROM s WHERE true ON CONFLICT DO NOTHING",
            "UPDATE OR IGNORE t AS x INDEXED BY i SET a = 1, (b, c) = (2, 3) FROM u WHERE x.a = u.a RETURNING a ORDER BY a LIMIT 3",
            "DELETE FROM t AS x NOT INDEXED WHERE a RETURNING * ORDER BY a LIMIT 1 OFFSET 2",
            "CREATE TEMP TABLE IF NOT EXISTS t (a INTEGER PRIMARY KEY DESC ON CONFLICT FAIL AUTOINCREMENT, b TEXT NOT NULL UNIQUE CHECK (b <> '') DEFAULT 'x' COLLATE nocase REFERENCES p (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED, c AS (a + 1) STORED, CONSTRAINT pk UNIQUE (b, c), FOREIGN KEY (c) REFERENCES q) WITHOUT ROWID, STRICT",
            "CREATE TABLE t2 AS SELECT * FROM t",
            "ALTER TABLE t RENAME TO u", "ALTER TABLE t RENAME COLUMN a TO b", "ALTER TABLE t ADD COLUMN d DEFAULT -1", "ALTER TABLE t DROP COLUMN d",
            "CREATE UNIQUE INDEX IF NOT EXISTS s.i ON t (a COLLATE nocase, b DESC, lower(c)) WHERE a NOT NULL",
            "CREATE VIEW v (a) AS SELECT 1",
            "CREATE TRIGGER tr BEFORE UPDATE OF a, b ON t FOR EACH ROW WHEN new.a > 0 BEGIN INSERT INTO log VALUES (new.a); SELECT RAISE(IGNORE); END",
            "CREATE VIRTUAL TABLE f USING fts5(a, b, tokenize = 'porter ascii')",
            "DROP TABLE IF EXISTS s.t", "DROP INDEX i", "DROP VIEW v", "DROP TRIGGER tr",
            "ATTACH DATABASE 'x.db' AS aux KEY 'k'", "DETACH aux", "PRAGMA main.journal_mode = WAL", "PRAGMA table_info(t)", "PRAGMA cache_size = -2000",
            "BEGIN IMMEDIATE TRANSACTION", "COMMIT", "END TRANSACTION", "ROLLBACK TO SAVEPOINT sp", "SAVEPOINT sp", "RELEASE sp",
            "VACUUM INTO 'file.db'", "VACUUM main", "ANALYZE", "ANALYZE main.t", "REINDEX t", "EXPLAIN QUERY PLAN SELECT 1",
        ]
        for sql in ok {
            let statement = try Parser.parseStatement(sql)
            let printed = Printer().print(statement)
            #expect(try Parser.parseStatement(printed) == statement, "\(sql) printed as \(printed)")
        }
    }

    @Test func fuzzFindingsRoundTrip() throws {
        // Found by scripts/fuzz-sql: fallback keywords that are names outside expressions stay bare.
        for sql in ["CREATE TABLE t7(a DEFAULT CURRENT_TIME, CURRENT_TIMESTAMP, cast, raise)", "SELECT x FROM cast AS raise", "SELECT (0 IS NOT false(t0.c0 = 1)) IS 0 FROM t0"] {
            let statement = try Parser.parseStatement(sql)
            #expect(try Parser.parseStatement(Printer().print(statement)) == statement)
            #expect(Printer().print(statement) == sql)
        }
    }

    @Test func errorsAreTypedWithPosition() {
        let bad = ["SELECT", "SELECT 1 +", "SELECT * FROM", "SELECT 1 FROM t WHERE", "CREATE TABLE", "SELECT a FROM t ORDER a",
                   "SELECT 1 UNION SELECT 2 ORDER BY 1 UNION SELECT 3", "INSERT INTO t", "UPDATE t", "DELETE t", "FROB x",
                   "INSERT INTO t SELECT * FROM a JOIN b ON CONFLICT DO NOTHING", "SELECT 1; SELECT 2", "VALUES (1) ORDER BY 1", "SELECT * FROM a LEFT FOO JOIN b",
                   "CREATE TRIGGER t AFTER INSERT ON x BEGIN UPDATE y SET a = 1 LIMIT 1; END"]
        for sql in bad {
            #expect(throws: SQLSyntaxError.self, "\(sql)") { try Parser.parseStatement(sql) }
        }
        do {
            _ = try Parser.parseStatement("SELECT a\nFROM t WHERE a = = 1")
        } catch {
            #expect(error.kind == .syntax)
            #expect(error.token == "=")
            #expect(error.line == 2 && error.column == 18)
            #expect(error.message == "near \"=\": syntax error")
            #expect(error.excerpt.contains("a = = 1"))
        }
        do {
            _ = try Parser.parseStatement("SELECT (1")
        } catch {
            #expect(error.kind == .incompleteInput)
        }
    }

    @Test func scriptsParseEveryStatement() throws {
        let statements = try Parser.parseScript("SELECT ?; ; INSERT INTO t VALUES (?);CREATE TRIGGER x AFTER INSERT ON t BEGIN SELECT 1; END;")
        #expect(statements.count == 3)
        if case .insert(let insert) = statements[1], case .select(let s) = insert.source, case .values(let rows) = s.first,
           case .parameter(let p) = rows[0][0] {
            #expect(p.index == 1) // numbering restarts per statement
        } else {
            Issue.record("unexpected shape")
        }
    }

    @Test func printerQuotesWhereNeeded() throws {
        let statement = try Parser.parseStatement("SELECT \"a b\", [c], `d`, \"select\", key, \"x\"\"y\" FROM \"t\" AS 'al'")
        #expect(Printer().print(statement) == "SELECT \"a b\", [c], `d`, \"select\", key, \"x\"\"y\" FROM \"t\" AS 'al'")
        #expect(Printer(options: PrinterOptions(identifierQuoting: .minimal)).print(statement) == "SELECT \"a b\", c, d, \"select\", \"key\", \"x\"\"y\" FROM t AS al")
        #expect(Printer(options: PrinterOptions(identifierQuoting: .always)).print(statement) == "SELECT \"a b\", \"c\", \"d\", \"select\", \"key\", \"x\"\"y\" FROM \"t\" AS \"al\"")
        let built = Statement.select(SelectStatement(first: .select(SelectClause(columns: [.expression(.column(ColumnReference(column: "order")), alias: nil),
                                                                                            .expression(.unary(.negate, .unary(.negate, int("1"))), alias: nil)]))))
        #expect(Printer().print(built) == "SELECT \"order\", - -1")
    }
}
