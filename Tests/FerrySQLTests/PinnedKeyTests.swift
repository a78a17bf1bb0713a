import Testing
@testable import FerrySQL

/// `PinnedKey.find`: the key a statement's `WHERE` pins one table's rows to, found only where the
/// text alone decides it.
@Suite struct PinnedKeyTests {
    static let tables = TableSet(["main.t", "main.u"])

    /// The key `sql` pins `t` to, with `id` and the rowid's spellings as its key columns.
    func pinned(_ sql: String, table: String = "t", keyColumns: Set<String> = ["id", "rowid", "oid", "_rowid_"]) throws -> PinnedKey? {
        let statement = try Parser.parseStatement(sql)
        return PinnedKey.find(in: statement, analysis: StatementAnalysis(statement), table: table, tables: Self.tables, keyColumns: keyColumns)
    }

    func parameter(_ text: String, _ index: Int, _ relation: PinnedKey.Relation = .oneOf) -> PinnedKey {
        PinnedKey(relation, [.parameter(Parameter(text, index: index))])
    }
    func integer(_ value: Int64, _ relation: PinnedKey.Relation = .oneOf) -> PinnedKey { PinnedKey(relation, [.integer(value)]) }

    @Test func pointAndBoundedStatementsPinTheirKeys() throws {
        #expect(try pinned("SELECT * FROM t WHERE id = ?1") == parameter("?1", 1))
        #expect(try pinned("SELECT a FROM t WHERE a > 3 AND ? = id AND b = ?") == parameter("?", 1))
        #expect(try pinned("SELECT a FROM t WHERE b = ? AND t.rowid == ?") == parameter("?", 2))
        #expect(try pinned("SELECT * FROM main.t AS x WHERE x.id = :key") == parameter(":key", 1))
        #expect(try pinned("SELECT count(*) FROM t WHERE (a = 1 AND (oid = 42)) GROUP BY b") == integer(42))
        #expect(try pinned("SELECT * FROM t WHERE _rowid_ = -7") == integer(-7))
        #expect(try pinned("SELECT * FROM t WHERE id = 0x10") == integer(16))
        #expect(try pinned("SELECT * FROM t WHERE id = 0xFFFFFFFFFFFFFFFF") == integer(-1))
        #expect(try pinned("SELECT * FROM t INDEXED BY t_a WHERE id = ?3") == parameter("?3", 3))
        // A join whose WHERE pins t (qualified) reads t's pinned row alone.
        #expect(try pinned("SELECT * FROM t JOIN v ON v.x = t.a WHERE t.id = ?1") == parameter("?1", 1))
        #expect(try pinned("UPDATE t SET a = ?2 WHERE id = ?1") == parameter("?1", 1))
        #expect(try pinned("DELETE FROM t WHERE id = 5 RETURNING *") == integer(5))
        #expect(try pinned("UPDATE t AS x SET a = 1 WHERE x.id = ?1 AND a IN (SELECT a FROM v)") == parameter("?1", 1))
        // Upper bounds and lists.
        #expect(try pinned("SELECT * FROM t WHERE id < ?1 ORDER BY id DESC LIMIT 50") == parameter("?1", 1, .below))
        #expect(try pinned("SELECT * FROM t WHERE ?1 > id") == parameter("?1", 1, .below))
        #expect(try pinned("SELECT * FROM t WHERE rowid <= 10") == integer(10, .atMost))
        #expect(try pinned("SELECT * FROM t WHERE 10 >= rowid") == integer(10, .atMost))
        #expect(try pinned("SELECT * FROM t WHERE id BETWEEN ?1 AND ?2") == parameter("?2", 2, .atMost))
        #expect(try pinned("SELECT * FROM t WHERE id IN (1, ?2, -3)")
            == PinnedKey(.oneOf, [.integer(1), .parameter(Parameter("?2", index: 2)), .integer(-3)]))
        #expect(try pinned("DELETE FROM t WHERE id < 100 AND a = 1") == integer(100, .below))
        // Other migrating tables may be read beside it.
        #expect(try pinned("SELECT *, (SELECT max(a) FROM u) FROM t WHERE id = ?1") == parameter("?1", 1))
        #expect(try pinned("SELECT * FROM u WHERE id = ?1", table: "u") == parameter("?1", 1))
    }

    @Test func nothingIsPinnedWhereTheTextDoesNotDecideIt() throws {
        let unpinned = [
            "SELECT * FROM t",
            "SELECT * FROM t WHERE a = ?1",  // not a key column
            "SELECT * FROM t WHERE id = ?1 OR a = 2",  // not a top-level AND term
            "SELECT * FROM t WHERE NOT id = ?1",
            "SELECT * FROM t WHERE id IN (?1, a)",
            "SELECT * FROM t WHERE id IN ()",
            "SELECT * FROM t WHERE id NOT IN (?1)",
            "SELECT * FROM t WHERE id IN (SELECT 1)",
            "SELECT * FROM t WHERE id NOT BETWEEN 1 AND 2",
            "SELECT * FROM t WHERE id BETWEEN 1 AND a",
            "SELECT * FROM t WHERE id IS ?1",
            "SELECT * FROM t WHERE id > ?1",  // lower bounds say nothing of the largest key
            "SELECT * FROM t WHERE id >= ?1",
            "SELECT * FROM t WHERE ?1 < id",
            "SELECT * FROM t WHERE id <> ?1",
            "SELECT * FROM t WHERE id = '5'",  // compared by affinity
            "SELECT * FROM t WHERE id = 5.0",
            "SELECT * FROM t WHERE id = ?1 + 1",
            "SELECT * FROM t WHERE +id = ?1",
            "SELECT * FROM t WHERE id = a",
            "SELECT * FROM t WHERE id = 99999999999999999999",  // does not fit 64 bits
            "SELECT * FROM t WHERE id = ?1 = 1",
            "SELECT * FROM t WHERE id = ?1 UNION ALL SELECT * FROM t WHERE id = ?2",  // two references
            "SELECT * FROM t WHERE id = ?1 UNION ALL SELECT * FROM v",  // a compound
            "SELECT * FROM t, v WHERE id = ?1",  // unqualified beside another item
            "SELECT * FROM v JOIN (t) ON 1 WHERE t.id = ?1",  // not a table item of the core itself
            "SELECT * FROM t WHERE id = ?1 AND a IN (SELECT a FROM t)",  // read twice
            "SELECT * FROM (SELECT * FROM t) WHERE id = ?1",  // pinned outside t's own core
            "SELECT * FROM v WHERE EXISTS (SELECT 1 FROM t WHERE t.id = ?1)",
            "WITH c AS (SELECT * FROM t) SELECT * FROM c WHERE id = ?1",
            "SELECT * FROM v WHERE v.id = ?1 AND v.a IN (SELECT a FROM t)",
            "UPDATE t SET a = 1 FROM v WHERE id = ?1",  // unqualified beside another item
            "UPDATE v SET a = 1 WHERE id = ?1 AND a IN (SELECT a FROM t)",  // t is read, not written
            "INSERT INTO t(id) VALUES (?1)",
            "DELETE FROM t WHERE id = ?1 AND rowid IN (SELECT rowid FROM t)",
        ]
        for sql in unpinned {
            #expect(try pinned(sql) == nil, "\(sql)")
        }
        // A rowid spelling the table has as a column of its own is not the rowid.
        #expect(try pinned("SELECT * FROM t WHERE rowid = 1", keyColumns: ["id", "oid", "_rowid_"]) == nil)
        #expect(try pinned("SELECT * FROM t WHERE id = 1", keyColumns: []) == nil)
    }

    @Test func theLargestKeyFollowsTheRelation() {
        // Each operand's value by its position: `?1`, `?2`, … (nil: no integer value).
        func largest(_ relation: PinnedKey.Relation, _ values: [Int64?]) -> Int64? {
            let operands = values.indices.map { PinnedKey.Operand.parameter(Parameter("?\($0 + 1)", index: $0 + 1)) }
            return PinnedKey(relation, operands).largestKey { operand in
                guard case .parameter(let parameter) = operand else { return nil }
                return values[parameter.index - 1]
            }
        }
        #expect(largest(.oneOf, [3, 9, -2]) == 9)
        #expect(largest(.oneOf, [-5]) == -5)
        #expect(largest(.atMost, [7]) == 7)
        #expect(largest(.below, [7]) == 6)
        #expect(largest(.below, [.min]) == .min)
        // An operand without a value: any key is possible.
        #expect(largest(.oneOf, [1, nil, 3]) == nil)
        #expect(largest(.atMost, [nil]) == nil)
        #expect(largest(.oneOf, []) == nil)
        #expect(PinnedKey(.oneOf, [.integer(4), .integer(2)]).largestKey { operand in
            if case .integer(let value) = operand { return value } else { return nil }
        } == 4)
    }
}
