import FerryTestSupport
import Testing
@testable import FerrySQLite

/// An error thrown by test bodies to force a rollback.
private struct Abort: Error, Equatable {}

/// An in-memory connection with an empty table `t(x)`.
private func databaseWithTable() throws -> Connection {
    let db = try Connection.inMemory()
    try db.execute("CREATE TABLE t(x)")
    return db
}

/// The values of `t.x` in insertion order.
private func values(_ db: Connection) throws -> [Int] {
    try db.fetchAll("SELECT x FROM t ORDER BY rowid").map { try $0.column(0) }
}

@Suite(.timeLimit(.minutes(3)))
struct TransactionTests {
    @Test func commitsWhenTheBodyReturns() throws {
        let db = try databaseWithTable()
        #expect(!db.isInTransaction)
        let result = try db.transaction { () throws -> String in
            #expect(db.isInTransaction)
            try db.execute("INSERT INTO t VALUES (1)")
            return "done"
        }
        #expect(result == "done")
        #expect(!db.isInTransaction)
        #expect(try values(db) == [1])
    }

    @Test(arguments: [Connection.TransactionKind.deferred, .immediate, .exclusive])
    func everyTransactionKindCommitsAndRollsBack(kind: Connection.TransactionKind) throws {
        let dir = Sandbox()
        let db = try Connection(path: dir.path("kinds.db"))
        try db.execute("CREATE TABLE t(x)")
        try db.transaction(kind) { try db.execute("INSERT INTO t VALUES (1)") }
        #expect(throws: Abort()) {
            try db.transaction(kind) {
                try db.execute("INSERT INTO t VALUES (2)")
                throw Abort()
            }
        }
        #expect(try values(db) == [1])
    }

    @Test func rollsBackWhenTheBodyThrows() throws {
        let db = try databaseWithTable()
        try db.execute("INSERT INTO t VALUES (0)")
        #expect(throws: Abort()) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (1)")
                try db.execute("UPDATE t SET x = 10 WHERE x = 0")
                throw Abort()
            }
        }
        #expect(!db.isInTransaction)
        #expect(try values(db) == [0])
        // SQLite errors inside the body roll back too, and are rethrown unchanged.
        let error = #expect(throws: SQLiteError.self) {
            try db.transaction {
                try db.execute("INSERT INTO t VALUES (1)")
                try db.execute("INSERT INTO nowhere VALUES (1)")
            }
        }
        #expect(error?.resultCode == .error)
        #expect(!db.isInTransaction)
        #expect(try values(db) == [0])
    }

    @Test func innerSavepointRollbackKeepsOuterWork() throws {
        let db = try databaseWithTable()
        try db.transaction {
            try db.execute("INSERT INTO t VALUES (1)")
            #expect(throws: Abort()) {
                try db.transaction {  // nested: a savepoint
                    try db.execute("INSERT INTO t VALUES (2)")
                    throw Abort()
                }
            }
            #expect(db.isInTransaction)
            try db.savepoint {
                try db.execute("INSERT INTO t VALUES (3)")
                #expect(throws: Abort()) {
                    try db.savepoint {
                        try db.execute("INSERT INTO t VALUES (4)")
                        throw Abort()
                    }
                }
                try db.savepoint { try db.execute("INSERT INTO t VALUES (5)") }
            }
            #expect(try values(db) == [1, 3, 5])
        }
        #expect(try values(db) == [1, 3, 5])
        #expect(db.savepointCounter == 0)
    }

    @Test func outerRollbackUndoesReleasedSavepoints() throws {
        let db = try databaseWithTable()
        #expect(throws: Abort()) {
            try db.transaction {
                try db.savepoint { try db.execute("INSERT INTO t VALUES (1)") }
                throw Abort()
            }
        }
        #expect(try values(db).isEmpty)
    }

    @Test func savepointOutsideATransactionActsAsOne() throws {
        let db = try databaseWithTable()
        try db.savepoint {
            #expect(db.isInTransaction)
            try db.execute("INSERT INTO t VALUES (1)")
        }
        #expect(!db.isInTransaction)
        #expect(throws: Abort()) {
            try db.savepoint {
                try db.execute("INSERT INTO t VALUES (2)")
                throw Abort()
            }
        }
        #expect(!db.isInTransaction)
        #expect(try values(db) == [1])
    }

    @Test func failedCommitRollsBack() throws {
        let db = try Connection.inMemory()
        try db.execute("""
            CREATE TABLE p(id INTEGER PRIMARY KEY);
            CREATE TABLE c(p REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED);
            """)
        let error = #expect(throws: SQLiteError.self) {
            try db.transaction { try db.execute("INSERT INTO c VALUES (42)") }
        }
        #expect(error?.resultCode.primary == .constraint)
        #expect(!db.isInTransaction)
        #expect(try db.scalar("SELECT count(*) FROM c", as: Int.self) == 0)
    }

    @Test func changesAndRowids() throws {
        let db = try databaseWithTable()
        try db.execute("INSERT INTO t VALUES (1), (2), (3)")
        #expect(db.changes == 3)
        #expect(db.lastInsertRowid == 3)
        try db.execute("UPDATE t SET x = x + 1 WHERE x >= ?", [2])
        #expect(db.changes == 2)
        try db.execute("DELETE FROM t WHERE x = ?", [1])
        #expect(db.changes == 1)
        #expect(db.totalChanges == 6)
        try db.execute("INSERT INTO t(rowid, x) VALUES (?, ?)", [100, 9])
        #expect(db.lastInsertRowid == 100)
        db.setLastInsertRowid(7)
        #expect(db.lastInsertRowid == 7)
        // A SELECT does not change the counts.
        _ = try db.fetchAll("SELECT * FROM t")
        #expect(db.changes == 1 && db.lastInsertRowid == 7)
    }

    // MARK: Statement cache

    @Test func cachedStatementsAreReusedAndReset() throws {
        let db = try databaseWithTable()
        try db.execute("INSERT INTO t VALUES (1), (2), (3)")
        let sql = "SELECT x FROM t WHERE x >= ? ORDER BY x"
        let first = try db.cachedStatement(sql)
        #expect(try db.cachedStatement(sql) === first)
        #expect(try first.fetchAll([2]).map { try $0.column(0, as: Int.self) } == [2, 3])
        // fetchOne stops after one row, yet the next use starts from the beginning.
        #expect(try db.fetchOne(sql, [1])?.values == [.integer(1)])
        #expect(try db.fetchAll(sql, [1]).count == 3)
        #expect(try db.cachedStatement(sql) === first)
        // Results reflect writes made between uses.
        try db.execute("INSERT INTO t VALUES (4)")
        #expect(try db.fetchAll(sql, [3]).map { try $0.column(0, as: Int.self) } == [3, 4])
    }

    /// A statement cached by its text is found again by a `HashedSQL` of the same text (and the
    /// other way round), and only by that text; the untrusted cache stays apart.
    @Test func hashedSQLFindsTheStatementCachedByItsText() throws {
        let db = try databaseWithTable()
        try db.execute("INSERT INTO t VALUES (1), (2)")
        let sql = "SELECT x FROM t WHERE x > ? ORDER BY x"
        let byText = try db.cachedStatement(sql)
        let key = HashedSQL(sql)
        #expect(key == HashedSQL(String(decoding: Array(sql.utf8), as: UTF8.self)))  // equal texts in other buffers are one key
        #expect(try db.cachedStatement(key) === byText)
        #expect(try db.cachedStatement(HashedSQL(sql)) === byText)
        let other = HashedSQL("SELECT x FROM t WHERE x < ? ORDER BY x")
        #expect(other != key)
        let byKey = try db.cachedStatement(other)
        #expect(byKey !== byText)
        #expect(try db.cachedStatement(other.sql) === byKey)
        #expect(try byKey.fetchAll([2]).map { try $0.column(0, as: Int.self) } == [1])
        #expect(try db.cachedStatement(key).fetchAll([1]).map { try $0.column(0, as: Int.self) } == [2])
        db.setAuthorizer { _, _ in .allow }
        let untrusted = try db.withStatementTrust(.untrusted) { () throws(SQLiteError) in try db.cachedStatement(key) }
        #expect(untrusted !== byText)
        #expect(try db.cachedStatement(key) === byText)
    }

    @Test func iteratingCachedStatementIsNotHandedOutAgain() throws {
        let db = try databaseWithTable()
        try db.execute("INSERT INTO t VALUES (1), (2)")
        let sql = "SELECT x FROM t ORDER BY x"
        let outer = try db.cachedStatement(sql)
        var pairs: [[Int]] = []
        try outer.forEachRow { row in
            let x = Int(row.int64(0))
            // The same SQL while `outer` iterates: a fresh statement, so `outer` keeps its position.
            let inner = try db.cachedStatement(sql)
            #expect(inner !== outer)
            let ys: [Int] = try inner.fetchAll().map { try $0.column(0) }
            pairs.append([x] + ys)
        }
        #expect(pairs == [[1, 1, 2], [2, 1, 2]])
        #expect(try db.cachedStatement(sql) === outer)
    }

    @Test func cacheCapacityAndClearing() throws {
        let db = try Connection(path: ":memory:", configuration: .init(statementCacheCapacity: 2))
        db.clearStatementCache()  // forget the statements run while opening
        let a = try db.cachedStatement("SELECT 1")
        _ = try db.cachedStatement("SELECT 2")
        #expect(try db.cachedStatement("SELECT 1") === a)
        _ = try db.cachedStatement("SELECT 3")  // over capacity: the cache starts over
        #expect(try db.cachedStatement("SELECT 1") !== a)
        let b = try db.cachedStatement("SELECT 1")
        db.clearStatementCache()
        #expect(try db.cachedStatement("SELECT 1") !== b)
        // A statement dropped from the cache still works for whoever holds it.
        #expect(try a.fetchOne()?.values == [.integer(1)])
    }

    /// Cached statements hold lookaside slots: with SQLite's 40 they run out (small allocations
    /// then go to malloc), with the default configuration's 500 they do not. (Debian's SQLite,
    /// the SystemSQLite trait, has no lookaside at all.)
    @Test(.enabled(if: SQLiteEngine.hasLookaside)) func lookasideSlotsOutlastACacheOfStatements() throws {
        func usage(slots: Int) throws -> (highWater: Int, missesWhenFull: Int) {
            let db = try Connection(path: ":memory:", configuration: .init(lookasideSlots: slots))
            try db.execute("CREATE TABLE t(a, b, c)")
            for n in 0..<60 { _ = try db.cachedStatement("SELECT a, b, c, \(n) FROM t WHERE a = ? AND b > ? ORDER BY c") }
            return db.lookasideUsage()
        }
        let configured = try usage(slots: DatabaseConfiguration().lookasideSlots)
        let sqliteDefault = try usage(slots: 0)
        #expect(sqliteDefault.missesWhenFull > 0)
        #expect(configured.missesWhenFull == 0)
        #expect(configured.highWater > sqliteDefault.highWater)
    }

    /// `changes()` is the connection's own function (see `reportChanges`), usable wherever the
    /// built-in is: in a view and a trigger under `trusted_schema = OFF`, and reporting a value.
    @Test func changesWorksWhereTheBuiltInDoes() throws {
        let db = try databaseWithTable()
        try db.execute("""
            PRAGMA trusted_schema = OFF;
            CREATE TABLE log(n);
            CREATE VIEW v AS SELECT changes() AS n;
            CREATE TRIGGER t_log AFTER INSERT ON t BEGIN INSERT INTO log VALUES (changes()); END;
            INSERT INTO t VALUES (1), (2);
            """)
        #expect(try db.scalar("SELECT n FROM v", as: Int.self) == 2)
        db.reportChanges(7)
        #expect(try db.scalar("SELECT changes()", as: Int.self) == 7)
        try db.execute("DELETE FROM log")  // changes a row: SQLite's count again
        #expect(try db.scalar("SELECT changes()", as: Int.self) == 2)
        #expect(db.visibleChanges == 2)
    }

    @Test func cachedStatementSeesSchemaChanges() throws {
        let db = try databaseWithTable()
        try db.execute("INSERT INTO t VALUES (1)")
        #expect(try db.fetchOne("SELECT * FROM t")?.count == 1)
        let cached = try db.cachedStatement("SELECT * FROM t")
        try db.execute("ALTER TABLE t ADD COLUMN y DEFAULT 'new'")
        // SQLite re-prepares the cached statement at its next step: rows take the new shape.
        #expect(try db.cachedStatement("SELECT * FROM t") === cached)
        #expect(try db.fetchOne("SELECT * FROM t") == Row(columnNames: ["x", "y"], values: [.integer(1), .text("new")]))
        try db.execute("ALTER TABLE t RENAME COLUMN y TO z")
        #expect(try db.fetchOne("SELECT * FROM t")?.columnNames == ["x", "z"])
    }

    @Test func stepByStepAndColumnAccessors() throws {
        let db = try databaseWithTable()
        try db.execute("INSERT INTO t VALUES (1), (NULL)")
        let statement = try db.prepare("SELECT x, typeof(x) AS kind FROM t ORDER BY rowid")
        #expect(statement.columnCount == 2)
        #expect(statement.columnNames == ["x", "kind"])
        #expect(try statement.step())
        #expect(statement.int64(0) == 1 && !statement.isNull(0))
        #expect(statement.currentRow() == Row(columnNames: ["x", "kind"], values: [.integer(1), .text("integer")]))
        #expect(try statement.step())
        #expect(statement.isNull(0) && statement.column(1) == .text("null"))
        #expect(try !statement.step())
        statement.reset()
        #expect(try statement.step())
        #expect(statement.int64(0) == 1)
        statement.reset()
        #expect(statement.sql == "SELECT x, typeof(x) AS kind FROM t ORDER BY rowid")
    }

    // MARK: Scripts

    @Test func executeRunsMultiStatementScripts() throws {
        let db = try Connection.inMemory()
        try db.execute("""
            -- a comment first
            CREATE TABLE a(x);  /* block comment */ CREATE TABLE b(y);
            INSERT INTO a VALUES (1); INSERT INTO a VALUES ('two;three');
            INSERT INTO b SELECT x FROM a;
            SELECT * FROM a;  -- rows of a SELECT in a script are discarded
            ;;
            """)
        #expect(try db.fetchAll("SELECT y FROM b ORDER BY rowid").map(\.values) == [[.integer(1)], [.text("two;three")]])
    }

    @Test func scriptsCanHoldTransactionsAndTriggers() throws {
        let db = try Connection.inMemory()
        try db.execute("""
            CREATE TABLE t(x);
            CREATE TABLE log(x);
            CREATE TRIGGER t_ai AFTER INSERT ON t BEGIN INSERT INTO log VALUES (new.x); INSERT INTO log VALUES (-new.x); END;
            BEGIN;
            INSERT INTO t VALUES (5);
            COMMIT;
            """)
        #expect(try db.fetchAll("SELECT x FROM log ORDER BY rowid").map { try $0.column(0, as: Int.self) } == [5, -5])
        #expect(!db.isInTransaction)
    }

    @Test func configurationIsApplied() throws {
        let dir = Sandbox()
        let wal = try Connection(path: dir.path("wal.db"))
        #expect(try wal.scalar("PRAGMA journal_mode", as: String.self) == "wal")
        #expect(try wal.scalar("PRAGMA foreign_keys", as: Bool.self) == true)
        #expect(try wal.scalar("PRAGMA synchronous", as: Int.self) == 1)  // NORMAL
        #expect(try wal.scalar("PRAGMA busy_timeout", as: Int.self) == 5000)
        let other = try Connection(path: dir.path("delete.db"), configuration: .init(
            busyTimeout: .milliseconds(10), journalMode: .delete, synchronous: .full, foreignKeys: false,
            prepareStatements: ["CREATE TABLE IF NOT EXISTS prepared(x)"]))
        #expect(try other.scalar("PRAGMA journal_mode", as: String.self) == "delete")
        #expect(try other.scalar("PRAGMA foreign_keys", as: Bool.self) == false)
        #expect(try other.scalar("PRAGMA synchronous", as: Int.self) == 2)  // FULL
        #expect(try other.scalar("PRAGMA busy_timeout", as: Int.self) == 10)
        #expect(try other.scalar("SELECT count(*) FROM prepared", as: Int.self) == 0)
        let memory = try Connection.inMemory()
        #expect(try memory.scalar("PRAGMA journal_mode", as: String.self) == "memory")
        #expect(memory.path == ":memory:")
    }

    @Test func quotesIdentifiers() throws {
        #expect(Connection.quoteIdentifier("plain") == "\"plain\"")
        #expect(Connection.quoteIdentifier("we\"ird") == "\"we\"\"ird\"")
        let db = try Connection.inMemory()
        let name = "odd \"name\"; DROP"
        try db.execute("CREATE TABLE \(db.quoteIdentifier(name))(x)")
        #expect(try db.scalar("SELECT name FROM sqlite_master", as: String.self) == name)
    }

    /// Every `read { }` and `write { }` runs a transaction: its control statements are compiled
    /// once per connection (the authorizer sees them once), and still commit and roll back.
    @Test func transactionControlStatementsCompileOncePerConnection() throws {
        let db = try databaseWithTable()
        var compiled: [String] = []
        db.setAuthorizer { request, _ in
            if request.action == .transaction || request.action == .savepoint {
                compiled.append([request.first, request.second].compactMap { $0 }.joined(separator: " "))
            }
            return .allow
        }
        for round in 0..<3 {
            try db.transaction(.immediate) {
                try db.execute("INSERT INTO t VALUES (?)", [.integer(Int64(round))])
                try db.transaction { try db.execute("INSERT INTO t VALUES (?)", [.integer(Int64(10 + round))]) }
            }
            #expect(throws: Abort()) {
                try db.transaction(.immediate) {
                    try db.execute("INSERT INTO t VALUES (-1)")
                    try db.savepoint { () throws -> Void in throw Abort() }
                }
            }
        }
        #expect(try values(db) == [0, 10, 1, 11, 2, 12])
        // BEGIN IMMEDIATE, SAVEPOINT, RELEASE, COMMIT, ROLLBACK TO, RELEASE (as the savepoint's
        // release after its rollback), ROLLBACK: each compiled in the first round only.
        #expect(compiled.count == Set(compiled).count, "compiled again: \(compiled)")
        #expect(Set(compiled).contains("BEGIN"))
        #expect(Set(compiled).contains("COMMIT"))
        #expect(Set(compiled).contains("ROLLBACK"))
    }
}
