import FerryTestSupport
import Foundation
import Testing
@testable import FerrySQLite

/// The `SQLiteError.sqlite` fields of an error, or nil (recording an issue) for any other error.
private func sqliteFields(_ error: SQLiteError?, sourceLocation: SourceLocation = #_sourceLocation) -> (code: ResultCode, message: String, sql: String?)? {
    guard case .sqlite(let code, let message, let sql)? = error else {
        Issue.record("expected SQLiteError.sqlite, got \(String(describing: error))", sourceLocation: sourceLocation)
        return nil
    }
    return (code, message, sql)
}

@Suite(.timeLimit(.minutes(3)))
struct ErrorTests {
    @Test func syntaxErrorCarriesCodesMessageAndSQL() throws {
        let db = try Connection.inMemory()
        let error = #expect(throws: SQLiteError.self) { try db.prepare("SELEC 1") }
        let fields = try #require(sqliteFields(error))
        #expect(fields.code == .error)
        #expect(fields.code.primary == .error)
        #expect(fields.code.primaryCode == 1 && fields.code.extendedCode == 1)
        #expect(fields.message == "near \"SELEC\": syntax error")
        #expect(fields.sql == "SELEC 1")
        #expect(error?.resultCode == .error)
        #expect(error?.description == "SQLite error 1 (extended 1): near \"SELEC\": syntax error - while executing `SELEC 1`")
    }

    @Test func scriptErrorsNameTheWholeScript() throws {
        let db = try Connection.inMemory()
        let script = "CREATE TABLE a(x); SELECT * FROM missing; CREATE TABLE b(x)"
        let fields = try #require(sqliteFields(#expect(throws: SQLiteError.self) { try db.execute(script) }))
        #expect(fields.code == .error)
        #expect(fields.message == "no such table: missing")
        #expect(fields.sql == script)
        // The script stopped at the failure.
        #expect(try db.scalar("SELECT count(*) FROM sqlite_master", as: Int.self) == 1)
    }

    @Test func runtimeErrorsInScriptsNameTheFailingStatement() throws {
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE t(x NOT NULL)")
        let fields = try #require(sqliteFields(#expect(throws: SQLiteError.self) {
            try db.execute("INSERT INTO t VALUES (1); INSERT INTO t VALUES (NULL); INSERT INTO t VALUES (3)")
        }))
        #expect(fields.code == .constraintNotNull)
        #expect(fields.code.primary == .constraint)
        #expect(fields.message == "NOT NULL constraint failed: t.x")
        #expect(fields.sql?.trimmingCharacters(in: .whitespaces) == "INSERT INTO t VALUES (NULL);")
        #expect(try db.scalar("SELECT count(*) FROM t", as: Int.self) == 1)
    }

    @Test func uniqueViolationHasExtendedCode2067() throws {
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT UNIQUE)")
        try db.execute("INSERT INTO t(name) VALUES (?)", ["a"])
        let error = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t(name) VALUES (?)", ["a"]) }
        let fields = try #require(sqliteFields(error))
        #expect(fields.code == .constraintUnique)
        #expect(fields.code.extendedCode == 2067)
        #expect(fields.code.primary == .constraint && fields.code.primaryCode == 19)
        #expect(fields.message == "UNIQUE constraint failed: t.name")
        #expect(fields.sql == "INSERT INTO t(name) VALUES (?)")
        #expect(error?.description.hasPrefix("SQLite error 19 (extended 2067): UNIQUE constraint failed: t.name") == true)

        // Other constraint kinds keep their own extended codes.
        try db.execute("CREATE TABLE p(id INTEGER PRIMARY KEY); CREATE TABLE c(p REFERENCES p(id), v CHECK (v > 0))")
        #expect(sqliteFields(#expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t(id) VALUES (?)", [1]) })?.code
            == .constraintPrimaryKey)
        #expect(sqliteFields(#expect(throws: SQLiteError.self) { try db.execute("INSERT INTO c VALUES (?, 1)", [5]) })?.code
            == .constraintForeignKey)
        #expect(sqliteFields(#expect(throws: SQLiteError.self) { try db.execute("INSERT INTO c VALUES (NULL, ?)", [0]) })?.code
            == .constraintCheck)
    }

    @Test func missingFileIsFileNotFound() throws {
        let dir = Sandbox()
        let path = dir.path("missing.db")
        #expect(throws: SQLiteError.fileNotFound(path: path)) {
            try Connection(path: path, configuration: .init(readOnly: true))
        }
        #expect(throws: SQLiteError.fileNotFound(path: path)) {
            try Connection(path: path, configuration: .init(createIfMissing: false))
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(SQLiteError.fileNotFound(path: path).description == "no database file at \(path)")
    }

    @Test func missingDirectoryIsCantOpen() throws {
        let dir = Sandbox()
        let path = dir.path("no-such-dir/x.db")
        let fields = try #require(sqliteFields(#expect(throws: SQLiteError.self) { try Connection(path: path) }))
        #expect(fields.code.primary == .cantOpen)
    }

    @Test(arguments: [4096, 10])
    func nonDatabaseFileIsWrongKeyOrNotADatabase(size: Int) throws {
        let dir = Sandbox()
        let path = dir.path("text.db")
        try Data(String(repeating: "not a database. ", count: size / 16 + 1).utf8.prefix(size)).write(to: URL(fileURLWithPath: path))
        #expect(throws: SQLiteError.wrongKeyOrNotADatabase(path: path)) { try Connection(path: path) }
        #expect(throws: SQLiteError.wrongKeyOrNotADatabase(path: path)) {
            try Connection(path: path, configuration: .init(readOnly: true))
        }
        #expect(SQLiteError.wrongKeyOrNotADatabase(path: path).resultCode == .notADatabase)
    }

    @Test func readOnlyConnectionRefusesWrites() throws {
        let dir = Sandbox()
        let path = dir.path("ro.db")
        try Connection(path: path).execute("CREATE TABLE t(x)")
        let db = try Connection(path: path, configuration: .init(readOnly: true))
        let fields = try #require(sqliteFields(#expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (1)") }))
        #expect(fields.code.primary == .readonly)
        #expect(try db.prepare("SELECT * FROM t").isReadOnly)
        #expect(try !db.prepare("INSERT INTO t VALUES (1)").isReadOnly)
    }

    @Test func closedConnectionThrowsConnectionClosed() throws {
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE t(x)")
        let cached = try db.cachedStatement("SELECT count(*) FROM t")
        #expect(db.isOpen)
        db.close()
        #expect(!db.isOpen)
        db.close()  // closing twice does nothing
        #expect(throws: SQLiteError.connectionClosed) { try db.execute("SELECT 1") }
        #expect(throws: SQLiteError.connectionClosed) { try db.execute("SELECT ?", [1]) }
        #expect(throws: SQLiteError.connectionClosed) { try db.fetchAll("SELECT 1") }
        #expect(throws: SQLiteError.connectionClosed) { try db.fetchOne("SELECT 1") }
        #expect(throws: SQLiteError.connectionClosed) { try db.prepare("SELECT 1") }
        #expect(throws: SQLiteError.connectionClosed) { try db.scalar("SELECT 1", as: Int.self) }
        #expect(throws: SQLiteError.connectionClosed) { try db.transaction { } }
        // A statement held past close fails to run, with a typed error.
        #expect(throws: SQLiteError.connectionClosed) { try cached.fetchOne() }
        #expect(db.changes == 0 && db.totalChanges == 0 && db.lastInsertRowid == 0 && !db.isInTransaction)
        db.interrupt()  // harmless after close
        #expect(SQLiteError.connectionClosed.description == "the connection is closed")
    }

    @Test func misuseIsReportedAsTypedErrors() throws {
        let db = try Connection.inMemory()
        #expect(throws: SQLiteError.invalidArguments("no statement in ``")) { try db.prepare("") }
        #expect(throws: SQLiteError.invalidArguments("no statement in `  -- nothing`")) { try db.prepare("  -- nothing") }
        #expect(throws: SQLiteError.invalidArguments("`SELECT 1; SELECT 2` holds more than one statement; use execute(_:) without arguments for scripts")) {
            try db.prepare("SELECT 1; SELECT 2")
        }
        #expect(throws: SQLiteError.self) { try db.execute("SELECT ?; SELECT 2", [1]) }
        // Trailing semicolons, whitespace and comments are not a second statement.
        #expect(try db.prepare("SELECT 1; -- done\n /* really */ ;\n").columnCount == 1)
        // An empty script does nothing.
        try db.execute("")
        try db.execute(" ; -- only a comment")
        // COMMIT without a transaction is SQLite's error, reported as such.
        let fields = try #require(sqliteFields(#expect(throws: SQLiteError.self) { try db.execute("COMMIT") }))
        #expect(fields.message == "cannot commit - no transaction is active")
    }

    @Test func reentrantPoolWriteIsMisuse() throws {
        let dir = Sandbox()
        let pool = try DatabasePool(path: dir.path("pool.db"))
        let error = try pool.write { _ in
            #expect(throws: SQLiteError.self) { try pool.write { _ in } }
        }
        guard case .misuse? = error else {
            Issue.record("expected misuse, got \(String(describing: error))")
            return
        }
    }

    @Test func interruptedStatementReportsInterrupt() throws {
        let db = try Connection.inMemory()
        let statement = try db.prepare("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT n FROM c")
        #expect(try statement.step())
        db.interrupt()
        let fields = try #require(sqliteFields(#expect(throws: SQLiteError.self) { while try statement.step() {} }))
        #expect(fields.code == .interrupt)
        // The connection works again afterwards.
        #expect(try db.scalar("SELECT 1", as: Int.self) == 1)
    }

    @Test func resultCodeParts() {
        #expect(ResultCode.constraintUnique.primary == .constraint)
        #expect(ResultCode.constraintUnique.description == "19/2067")
        #expect(ResultCode.ioErrorShortRead.primary == .ioError)
        #expect(ResultCode.readonlyDatabaseMoved.primary == .readonly)
        #expect(SQLiteError.cancelled.resultCode == .interrupt)
        #expect(SQLiteError.connectionClosed.resultCode == .misuse)
        #expect(SQLiteError.wrongKeyOrNotADatabase(path: "x").resultCode == .notADatabase)
        #expect(SQLiteError.fileNotFound(path: "x").resultCode == .cantOpen)
        #expect(SQLiteError.invalidArguments("x").resultCode == .range)
        #expect(SQLiteError.decodingFailed("x").resultCode == .mismatch)
        #expect(SQLiteError.sqlite(code: .constraintUnique, message: "m", sql: "s").sql == "s")
    }
}
