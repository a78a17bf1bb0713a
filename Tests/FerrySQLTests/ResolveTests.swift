import Testing
@testable import FerrySQL

/// `Rewriter.resolve` hands writes and schema statements back to the caller as requests (with the
/// statement parsed once), instead of calling the policy's closures: the caller builds its own
/// typed plan from them.
@Suite struct ResolveTests {
    let rewriter = Rewriter(policy: RewritePolicy(tables: TableSet(["t"]), replacementForRead: { name in
        .subquery("SELECT * FROM main.\(name) UNION ALL SELECT * FROM src.\(name)")
    }, rewriteWrite: { _ in
        Issue.record("resolve never calls rewriteWrite")
        return []
    }, rewriteOther: { _ in
        Issue.record("resolve never calls rewriteOther")
        return []
    }))

    @Test func statementsNamingNoListedTableAreNotParsed() throws {
        let outcome = try rewriter.resolve("SELECT a FROM other WHERE b = 1")
        guard case .unchanged = outcome.action else { Issue.record("\(outcome.action)"); return }
        #expect(outcome.parsed == nil && outcome.reads.isEmpty && outcome.writes.isEmpty)
        // A string that could be a name (SQLite reads 't' as one where a name is expected) is
        // parsed, and found to name no table.
        let string = try rewriter.resolve("SELECT a FROM other WHERE b = 't'")
        guard case .unchanged = string.action else { Issue.record("\(string.action)"); return }
        #expect(string.reads.isEmpty && string.writes.isEmpty)
    }

    @Test func readsComeBackRewrittenWithTheirParse() throws {
        let outcome = try rewriter.resolve("SELECT a FROM t WHERE b = 1")
        guard case .rewritten(let sql) = outcome.action else { Issue.record("\(outcome.action)"); return }
        #expect(sql == "SELECT a FROM (SELECT * FROM main.t UNION ALL SELECT * FROM src.t) AS t WHERE b = 1")
        #expect(outcome.reads == ["t"])
        guard case .select? = outcome.parsed?.statement else { Issue.record("the parse is kept"); return }
    }

    @Test func writesAndSchemaStatementsComeBackAsRequests() throws {
        let update = try rewriter.resolve("UPDATE t SET a = (SELECT max(a) FROM t) WHERE b = ?1")
        guard case .write(let request) = update.action else { Issue.record("\(update.action)"); return }
        #expect(request.table == "t" && request.kind == .update)
        #expect(request.sqlWithReadsRewritten == "UPDATE t SET a = (SELECT max(a) FROM (SELECT * FROM main.t UNION ALL SELECT * FROM src.t) AS t) WHERE b = ?1")
        #expect(update.writes == ["t"] && update.reads == ["t"])

        let alter = try rewriter.resolve("ALTER TABLE t ADD COLUMN z")
        guard case .other(let other) = alter.action else { Issue.record("\(alter.action)"); return }
        #expect(other.tables == ["t"] && other.originalSQL == "ALTER TABLE t ADD COLUMN z")
    }

    /// A parsed statement is rewritten again under another policy without a second parse, with the
    /// same result as from its text.
    @Test func aParsedStatementResolvesUnderAnotherPolicy() throws {
        let sql = "SELECT x.a FROM t AS x JOIN t AS y USING (a)"
        let parsed = try #require(try rewriter.resolve(sql).parsed)
        let targetOnly = Rewriter(policy: RewritePolicy(tables: TableSet(["t"]), replacementForRead: { _ in .table(QualifiedName(schema: Identifier("main"), Identifier("t"))) }))
        guard case .rewritten(let again) = try targetOnly.resolve(parsed: parsed).action,
              case .rewritten(let fromText) = try targetOnly.resolve(sql).action
        else { Issue.record("both are reads"); return }
        #expect(again == fromText && again == "SELECT x.a FROM main.t AS x JOIN main.t AS y USING (a)")
    }

    @Test func aSyntaxErrorIsTheRewritersError() {
        #expect(throws: RewriteError.self) { try rewriter.resolve("UPDATE t SET") }
        #expect(throws: RewriteError.self) { try rewriter.resolve("SELECT 'unterminated") }
    }
}
