import Testing
@testable import FerrySQL

/// A rewrite keeps the names SQLite gives result columns: an unaliased expression whose text the
/// rewrite changes is aliased with its original text; rowid reads get the policy's name; nothing
/// else is touched.
@Suite struct ResultColumnNameTests {
    var policy: RewritePolicy {
        var policy = RewritePolicy(tables: TableSet(["t"]), replacementForRead: { _ in .subquery("SELECT 1 AS a") })
        policy.rowidResultName = { _, _ in "Id" }
        return policy
    }

    func rewrite(_ sql: String) throws -> String { try Rewriter(policy: policy).rewrite(sql).statements.last! }

    private let union = "(SELECT 1 AS a)"

    @Test func expressionsThatReadTheTableKeepTheirText() throws {
        #expect(try rewrite("SELECT (SELECT max(a) FROM t)") == "SELECT (SELECT max(a) FROM \(union) AS t) AS \"(SELECT max(a) FROM t)\"")
        #expect(try rewrite("SELECT 1 + (SELECT  MAX(a)\nFROM t) FROM u")
                == "SELECT 1 + (SELECT  MAX(a)\nFROM \(union) AS t) AS \"1 + (SELECT  MAX(a)\nFROM t)\" FROM u")
        // A double quote in the text is doubled inside the alias.
        #expect(try rewrite("SELECT (SELECT \"a\" FROM t)") == "SELECT (SELECT \"a\" FROM \(union) AS t) AS \"(SELECT \"\"a\"\" FROM t)\"")
        // RETURNING too; in a scalar subquery nested in a result column, only the outer column is named.
        #expect(try rewrite("DELETE FROM u RETURNING (SELECT count(*) FROM t), x")
                == "DELETE FROM u RETURNING (SELECT count(*) FROM \(union) AS t) AS \"(SELECT count(*) FROM t)\", x")
    }

    @Test func columnsTheRewriteDoesNotTouchStayAsWritten() throws {
        #expect(try rewrite("SELECT count( * ), a, t.a, x AS y, (SELECT max(a) FROM t) z FROM t")
                == "SELECT count( * ), a, t.a, x AS y, (SELECT max(a) FROM \(union) AS t) z FROM \(union) AS t")
        #expect(try rewrite("SELECT *, u.* FROM t, u") == "SELECT *, u.* FROM \(union) AS t, u")
        #expect(try Rewriter(policy: policy).rewrite("SELECT (SELECT 1 FROM u)").isUnchanged)
    }

    @Test func rowidReadsGetThePolicysName() throws {
        #expect(try rewrite("SELECT rowid, OID, t._rowid_, (rowid), rowid + 1 FROM t")
                == "SELECT rowid AS \"Id\", OID AS \"Id\", t._rowid_ AS \"Id\", (rowid) AS \"Id\", rowid + 1 FROM \(union) AS t")
        // The rowid of a table the rewrite does not replace keeps its name.
        #expect(try rewrite("SELECT u.rowid FROM t, u") == "SELECT u.rowid FROM \(union) AS t, u")
    }
}
