import Testing
@testable import FerrySQLite

@Suite(.timeLimit(.minutes(3)))
struct ParameterTests {
    @Test func anonymousPositionalParameters() throws {
        let db = try Connection.inMemory()
        let row = try #require(try db.fetchOne("SELECT ?, ?, ?", [1, "two", nil]))
        #expect(row.values == [.integer(1), .text("two"), .null])
        let statement = try db.prepare("SELECT ?, ?")
        #expect(statement.parameterCount == 2)
        #expect(statement.parameterName(at: 1) == nil)
    }

    @Test func numberedParameters() throws {
        let db = try Connection.inMemory()
        // ?NNN binds the NNN-th value; a number may repeat and the count is the largest index.
        let statement = try db.prepare("SELECT ?2, ?1, ?2")
        #expect(statement.parameterCount == 2)
        #expect(statement.parameterName(at: 1) == "?1")
        #expect(statement.parameterName(at: 2) == "?2")
        #expect(try statement.fetchOne(["a", "b"])?.values == [.text("b"), .text("a"), .text("b")])
        // Numbered parameters may also be bound by number as a name.
        #expect(try statement.fetchOne(["1": "x", "?2": "y"])?.values == [.text("y"), .text("x"), .text("y")])
        // Gaps count: ?3 alone needs three values.
        #expect(try db.fetchOne("SELECT ?3", [1, 2, 3])?.values == [.integer(3)])
        // A plain ? after ?NNN takes the next index.
        #expect(try db.fetchOne("SELECT ?2, ?", [1, 2, 3])?.values == [.integer(2), .integer(3)])
    }

    @Test(arguments: [":", "@", "$"])
    func namedParameters(prefix: String) throws {
        let db = try Connection.inMemory()
        let sql = "SELECT \(prefix)a, \(prefix)b, \(prefix)a"
        let statement = try db.prepare(sql)
        #expect(statement.parameterCount == 2)
        #expect(statement.parameterName(at: 1) == "\(prefix)a")
        // With or without the prefix.
        #expect(try db.fetchOne(sql, ["a": 1, "b": "x"])?.values == [.integer(1), .text("x"), .integer(1)])
        #expect(try db.fetchOne(sql, ["\(prefix)a": 2, "\(prefix)b": nil])?.values == [.integer(2), .null, .integer(2)])
        // Named parameters also bind by position.
        #expect(try db.fetchOne(sql, [3, 4])?.values == [.integer(3), .integer(4), .integer(3)])
    }

    @Test func mixedNamePrefixesAndSwiftValues() throws {
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE t(a, b, c)")
        try db.execute("INSERT INTO t VALUES (:a, @b, $c)", StatementArguments(["a": 1, "b": "two", "c": 3.5] as [String: any SQLValueConvertible]))
        try db.execute("INSERT INTO t VALUES (?, ?, ?)", StatementArguments([4, Optional<String>.none, [UInt8]([1])] as [any SQLValueConvertible]))
        let rows = try db.fetchAll("SELECT a, b, c FROM t ORDER BY rowid")
        #expect(rows.map(\.values) == [[.integer(1), .text("two"), .real(3.5)], [.integer(4), .null, .blob([1])]])
    }

    @Test func dollarParametersWithTclSuffixes() throws {
        let db = try Connection.inMemory()
        // SQLite accepts `$name::suffix(...)` (Tcl syntax): the full text is the name.
        let statement = try db.prepare("SELECT $x::y")
        #expect(statement.parameterName(at: 1) == "$x::y")
        #expect(try statement.fetchOne(["x::y": 5])?.values == [.integer(5)])
    }

    // MARK: Errors

    @Test func wrongPositionalCountIsATypedError() throws {
        let db = try Connection.inMemory()
        #expect(throws: SQLiteError.invalidArguments("expected 2 argument(s), got 1 for `SELECT ?, ?`")) {
            try db.fetchOne("SELECT ?, ?", [1])
        }
        #expect(throws: SQLiteError.invalidArguments("expected 1 argument(s), got 2 for `SELECT ?`")) {
            try db.fetchOne("SELECT ?", [1, 2])
        }
        #expect(throws: SQLiteError.invalidArguments("expected 1 argument(s), got 0 for `SELECT ?`")) {
            try db.fetchAll("SELECT ?")
        }
        #expect(throws: SQLiteError.invalidArguments("expected 0 argument(s), got 1 for `SELECT 1`")) {
            try db.fetchOne("SELECT 1", [1])
        }
        #expect(throws: SQLiteError.invalidArguments("expected 3 argument(s), got 1 for `SELECT ?3`")) {
            try db.fetchOne("SELECT ?3", [1])
        }
        // The connection stays usable after the error.
        #expect(try db.fetchOne("SELECT ?, ?", [1, 2])?.values == [.integer(1), .integer(2)])
    }

    @Test func executeRefusesUnboundParameters() throws {
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE t(a)")
        // Without arguments `execute` runs a script; parameters in it would silently bind NULL.
        #expect(throws: SQLiteError.invalidArguments("`INSERT INTO t VALUES (?)` has 1 parameter(s) but no arguments were given")) {
            try db.execute("INSERT INTO t VALUES (?)")
        }
        #expect(throws: SQLiteError.self) {
            try db.execute("INSERT INTO t VALUES (1); INSERT INTO t VALUES (:x)")
        }
        // The statements before the failing one ran (scripts are not atomic).
        #expect(try db.scalar("SELECT count(*) FROM t", as: Int.self) == 1)
    }

    @Test func namedArgumentErrorsAreTyped() throws {
        let db = try Connection.inMemory()
        #expect(throws: SQLiteError.invalidArguments("missing value for parameter :b in `SELECT :a, :b`")) {
            try db.fetchOne("SELECT :a, :b", ["a": 1])
        }
        #expect(throws: SQLiteError.invalidArguments("no parameter named c in `SELECT :a`")) {
            try db.fetchOne("SELECT :a", ["a": 1, "c": 2])
        }
        #expect(throws: SQLiteError.invalidArguments("parameter 1 of `SELECT ?` has no name; use positional arguments")) {
            try db.fetchOne("SELECT ?", ["a": 1])
        }
        #expect(throws: SQLiteError.invalidArguments("no parameter named a in `SELECT 1`")) {
            try db.fetchOne("SELECT 1", ["a": 1])
        }
    }

    @Test func rebindingReplacesEarlierValues() throws {
        let db = try Connection.inMemory()
        let statement = try db.prepare("SELECT ?, ?")
        #expect(try statement.fetchOne([1, 2])?.values == [.integer(1), .integer(2)])
        #expect(try statement.fetchOne(["a", nil])?.values == [.text("a"), .null])
        // Without arguments the last binding is kept.
        #expect(try statement.fetchOne()?.values == [.text("a"), .null])
        // A failed bind leaves no half-bound statement behind: all parameters are cleared first.
        #expect(throws: SQLiteError.self) { try statement.fetchOne([9]) }
        #expect(try statement.fetchOne()?.values == [.null, .null])
    }

    @Test func bindingByIndexOutOfRangeIsSQLiteRangeError() throws {
        let db = try Connection.inMemory()
        let statement = try db.prepare("SELECT ?")
        let error = #expect(throws: SQLiteError.self) { try statement.bind(.integer(1), at: 2) }
        #expect(error?.resultCode == .range)
        try statement.bind(.integer(7), at: 1)
        #expect(try statement.fetchOne()?.values == [.integer(7)])
    }

    @Test func argumentLiterals() {
        let positional: StatementArguments = [1, "a", nil]
        #expect(positional == .positional([.integer(1), .text("a"), .null]))
        let named: StatementArguments = ["x": 1]
        #expect(named == .named(["x": .integer(1)]))
        #expect(StatementArguments.none.isEmpty)
        #expect(StatementArguments.named([:]).isEmpty)
        #expect(!positional.isEmpty)
    }
}
