import Testing
@testable import FerrySQL

private let unionPolicy = RewritePolicy(tables: TableSet(["t"]), replacementForRead: { name in
    .subquery("SELECT * FROM main.\(name) UNION ALL SELECT * FROM src.\(name)")
})

private func rewrite(_ sql: String, _ policy: RewritePolicy = unionPolicy) throws -> RewriteResult {
    try Rewriter(policy: policy).rewrite(sql)
}

private let union = "(SELECT * FROM main.t UNION ALL SELECT * FROM src.t)"

@Suite struct RewriterTests {
    @Test func untouchedStatementsComeBackUnchanged() throws {
        let result = try rewrite("SELECT a FROM other -- t is only in a comment\n WHERE b = 'x'")
        #expect(result.isUnchanged)
        #expect(result.statements == ["SELECT a FROM other -- t is only in a comment\n WHERE b = 'x'"])
        #expect(try rewrite("SELECT t FROM other").isUnchanged) // a column named t
    }

    @Test func readsAreReplacedKeepingAliases() throws {
        #expect(try rewrite("SELECT t.a FROM t WHERE t.b = 1").statements == ["SELECT t.a FROM \(union) AS t WHERE t.b = 1"])
        #expect(try rewrite("SELECT x.a FROM T AS x").statements == ["SELECT x.a FROM \(union) AS x"])
        #expect(try rewrite("SELECT main.t.a FROM main.t").statements == ["SELECT t.a FROM \(union) AS t"])
        #expect(try rewrite("SELECT * FROM u WHERE a IN t").statements == ["SELECT * FROM u WHERE a IN \(union)"])
        #expect(try rewrite("SELECT * FROM u JOIN (SELECT * FROM t) s ON 1").statements == ["SELECT * FROM u JOIN (SELECT * FROM \(union) AS t) s ON 1"])
        #expect(try rewrite("WITH c AS (SELECT * FROM t) SELECT * FROM c").statements == ["WITH c AS (SELECT * FROM \(union) AS t) SELECT * FROM c"])
        let result = try rewrite("SELECT count(*) /* keep */ FROM \"t\"")
        #expect(result.statements == ["SELECT count(*) /* keep */ FROM \(union) AS \"t\""])
        #expect(result.reads == ["t"] && result.writes.isEmpty)
    }

    /// With `aggregateArms`, a whole-table aggregate runs per arm and combines: names as SQLite
    /// gives them, anonymous parameters numbered, collations from the arms; other shapes read the
    /// union.
    @Test func wholeTableAggregatesSplitPerArm() throws {
        var policy = unionPolicy
        policy.aggregateArms = { _ in AggregateArms(arms: ["SELECT * FROM main.t", "SELECT * FROM src.t"], collations: ["b": "NOCASE"]) }
        let split = try rewrite("SELECT count(*), max(b) AS m FROM t WHERE a > ?", policy)
        let arm = { (table: String, index: Int) in
            "(SELECT count(*) AS ferry_p0_0, max(b COLLATE NOCASE) AS ferry_p1_0 FROM (SELECT * FROM \(table).t) AS t WHERE a > ?1) AS ferry_arm_\(index)"
        }
        #expect(split.statements == ["SELECT ferry_aggregate_0 AS \"count(*)\", ferry_aggregate_1 AS \"m\" FROM (SELECT "
            + "(ferry_arm_0.ferry_p0_0 + ferry_arm_1.ferry_p0_0) AS ferry_aggregate_0, (CASE WHEN ferry_arm_1.ferry_p1_0 IS NULL THEN ferry_arm_0.ferry_p1_0 "
            + "WHEN ferry_arm_0.ferry_p1_0 IS NULL THEN ferry_arm_1.ferry_p1_0 WHEN ferry_arm_1.ferry_p1_0 COLLATE \"NOCASE\" > ferry_arm_0.ferry_p1_0 "
            + "THEN ferry_arm_1.ferry_p1_0 ELSE ferry_arm_0.ferry_p1_0 END) AS ferry_aggregate_1 FROM \(arm("main", 0)), \(arm("src", 1)))"])
        #expect(split.reads == ["t"] && !split.isUnchanged)
        for sql in ["SELECT count(DISTINCT a) FROM t", "SELECT a, count(*) FROM t GROUP BY a", "SELECT max(a), b FROM t",
                    "SELECT count(*) FROM t JOIN u", "SELECT count(*) FROM t WHERE a IN (SELECT a FROM u)", "SELECT count(*) FROM t WHERE a = :a",
                    "SELECT group_concat(a) FROM t", "SELECT a FROM t", "SELECT count(*) FROM t ORDER BY 1", "SELECT count(*) FROM t UNION SELECT 1"] {
            #expect(try rewrite(sql, policy).statements.first?.contains("ferry_arm") == false, "\(sql)")
        }
    }

    @Test func readsInEveryPosition() throws {
        #expect(try rewrite("SELECT t.* FROM t").statements == ["SELECT t.* FROM \(union) AS t"])
        #expect(try rewrite("UPDATE u SET a = 1 FROM t WHERE u.id = t.id").statements == ["UPDATE u SET a = 1 FROM \(union) AS t WHERE u.id = t.id"])
        #expect(try rewrite("INSERT INTO u SELECT * FROM t WHERE 1 ON CONFLICT DO NOTHING").statements
                == ["INSERT INTO u SELECT * FROM \(union) AS t WHERE 1 ON CONFLICT DO NOTHING"])
        #expect(try rewrite("DELETE FROM u WHERE EXISTS (SELECT 1 FROM t AS x WHERE x.a = u.a)").statements
                == ["DELETE FROM u WHERE EXISTS (SELECT 1 FROM \(union) AS x WHERE x.a = u.a)"])
        // A CTE in a subquery shadows the table only inside that subquery.
        #expect(try rewrite("SELECT * FROM t WHERE a IN (WITH t AS (SELECT 1) SELECT * FROM t)").statements
                == ["SELECT * FROM \(union) AS t WHERE a IN (WITH t AS (SELECT 1) SELECT * FROM t)"])
        // A recursive CTE's body sees the CTE itself, not the table.
        #expect(try rewrite("WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT * FROM t").isUnchanged)
        let result = try rewrite("SELECT * FROM t JOIN t AS b USING (id)")
        #expect(result.statements == ["SELECT * FROM \(union) AS t JOIN \(union) AS b USING (id)"])
    }

    @Test func cteNamedLikeTheTableIsNotReplaced() throws {
        let result = try rewrite("WITH t AS (SELECT 1 AS a) SELECT a FROM t")
        #expect(result.statements == ["WITH t AS (SELECT 1 AS a) SELECT a FROM t"])
        #expect(result.reads.isEmpty)
    }

    @Test func tableReplacementByName() throws {
        let policy = RewritePolicy(tables: TableSet(["main.t"]), replacementForRead: { _ in .table(QualifiedName(schema: "aux", "t_view")) })
        #expect(try rewrite("SELECT * FROM t, main.t AS y", policy).statements == ["SELECT * FROM aux.t_view AS t, aux.t_view AS y"])
        #expect(try rewrite("SELECT * FROM temp.t", policy).isUnchanged)
    }

    @Test func writesGoThroughThePolicy() throws {
        let policy = RewritePolicy(tables: TableSet(["t"]), replacementForRead: { _ in .subquery("SELECT 1") }, rewriteWrite: { request in
            [.sql("INSERT INTO moved SELECT * FROM src.\(request.table)"), .sql(request.sqlWithReadsRewritten)]
        })
        let result = try rewrite("UPDATE t SET a = (SELECT max(a) FROM t) WHERE b IN (SELECT b FROM u)", policy)
        #expect(result.statements == ["INSERT INTO moved SELECT * FROM src.t", "UPDATE t SET a = (SELECT max(a) FROM (SELECT 1) AS t) WHERE b IN (SELECT b FROM u)"])
        #expect(result.reads == ["t"] && result.writes == ["t"])
        let insert = try rewrite("INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING", policy)
        #expect(insert.writes == ["t"] && insert.statements.count == 2)
    }

    @Test func indexHintsGoToThePolicyAndLeaveTheStatement() throws {
        var policy = unionPolicy
        policy.replacementForHintedRead = { name, hint in
            switch hint {
            case .indexedBy(let index): return .subquery("SELECT * FROM main.\(name) INDEXED BY \(index.name) UNION ALL SELECT * FROM src.\(name)")
            case .notIndexed: return .table(QualifiedName(schema: "aux", Identifier(name)))
            }
        }
        let hinted = "(SELECT * FROM main.t INDEXED BY i UNION ALL SELECT * FROM src.t)"
        #expect(try rewrite("SELECT a FROM t INDEXED BY i WHERE a > 1", policy).statements == ["SELECT a FROM \(hinted) AS t  WHERE a > 1"])
        #expect(try rewrite("SELECT a FROM t AS x INDEXED   BY i, u INDEXED BY j", policy).statements == ["SELECT a FROM \(hinted) AS x , u INDEXED BY j"])
        // A table replacement keeps the hint as written.
        #expect(try rewrite("SELECT a FROM t NOT INDEXED", policy).statements == ["SELECT a FROM aux.t AS t NOT INDEXED"])
        #expect(try rewrite("DELETE FROM u WHERE a IN (SELECT a FROM t y INDEXED BY i)", policy).statements
                == ["DELETE FROM u WHERE a IN (SELECT a FROM \(hinted) y )"])
    }

    @Test func starsOverAWidenedReplacementAreSpelledOut() throws {
        var policy = RewritePolicy(tables: TableSet(["t"]), replacementForRead: { _ in .subquery("SELECT rowid, a, b FROM main.t") })
        policy.starColumns = { _ in ["a", "b"] }
        #expect(try rewrite("SELECT rowid, * FROM t", policy).statements == [#"SELECT rowid, t."a", t."b" FROM (SELECT rowid, a, b FROM main.t) AS t"#])
        #expect(try rewrite("SELECT x.*, u.*, * FROM t AS x JOIN u ON 1", policy).statements
                == [#"SELECT x."a", x."b", u.*, x."a", x."b", u.* FROM (SELECT rowid, a, b FROM main.t) AS x JOIN u ON 1"#])
        // Each SELECT spells out its own stars; a star over a subquery, or over other tables alone, stays.
        #expect(try rewrite("SELECT * FROM (SELECT * FROM t) AS s, u", policy).statements
                == [#"SELECT * FROM (SELECT t."a", t."b" FROM (SELECT rowid, a, b FROM main.t) AS t) AS s, u"#])
        #expect(try rewrite("SELECT (SELECT count(*) FROM u), * FROM t", policy).statements
                == [#"SELECT (SELECT count(*) FROM u), t."a", t."b" FROM (SELECT rowid, a, b FROM main.t) AS t"#])
        #expect(try rewrite("UPDATE u SET x = 1 RETURNING *", policy).isUnchanged)
        // A star whose expansion is not exact is refused.
        #expect(throws: RewriteError.self) { try rewrite("SELECT * FROM t NATURAL JOIN u", policy) }
        #expect(throws: RewriteError.self) { try rewrite("SELECT * FROM t, (SELECT 1)", policy) }
        #expect(throws: RewriteError.self) { try rewrite("SELECT j.* FROM (t JOIN u ON 1) AS j", policy) }
        // Without starColumns the replacement is taken to show the table's columns.
        #expect(try rewrite("SELECT * FROM t").statements == ["SELECT * FROM \(union) AS t"])
    }

    @Test func unsupportedConstructsThrow() {
        #expect(throws: RewriteError.self) { try rewrite("SELECT * FROM t INDEXED BY i") }  // the policy has no hinted replacement
        #expect(throws: RewriteError.self) { try rewrite("CREATE VIEW v AS SELECT * FROM t") }
        #expect(throws: RewriteError.self) { try rewrite("DROP TABLE t") }
        #expect(throws: RewriteError.self) { try rewrite("SELECT * FROM t WHERE") }
    }

    @Test func scriptsAreRewrittenStatementByStatement() throws {
        let results = try Rewriter(policy: unionPolicy).rewrite(script: "SELECT 1; SELECT * FROM t;")
        #expect(results.map(\.isUnchanged) == [true, false])
        #expect(results[1].statements == ["SELECT * FROM \(union) AS t"])
    }

    @Test func aPolicysRefusalReachesTheCallerAsValues() {
        let policy = RewritePolicy(tables: TableSet(["t"]), replacementForRead: { name throws(RewriteError) in
            throw .refused(table: name, reason: "not today")
        })
        #expect(throws: RewriteError.refused(table: "t", reason: "not today")) { try Rewriter(policy: policy).rewrite("SELECT * FROM t") }
    }
}
