import FerrySQLite
import Testing

/// `Connection.defineProcedure`: a function called for what it does. Its statements run inside
/// the statement that called it, share its transaction, and fail or roll back with it.
struct ProcedureTests {
    /// A table, a log, and `note(x)`, which inserts `x` into the log from inside the caller.
    static func connection() throws -> Connection {
        let db = try Connection.inMemory()
        try db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, v)")
        try db.execute("CREATE TABLE log(v, type)")
        try db.execute("CREATE UNIQUE INDEX log_once ON log(v)")
        try db.defineProcedure("note") { db, arguments throws(SQLiteError) in
            try db.cachedStatement("INSERT INTO log VALUES (?1, typeof(?1))").execute(.positional(arguments))
        }
        return db
    }

    @Test func itsStatementsRunInsideTheCallerAndSeeItsArguments() throws {
        let db = try Self.connection()
        try db.execute("CREATE TEMP TRIGGER t_note BEFORE INSERT ON t BEGIN SELECT note(NEW.v); END")
        try db.execute("INSERT INTO t(v) VALUES (1), (2.5), ('three'), (x'04'), (NULL)")
        let log = try db.fetchAll("SELECT v, type FROM log ORDER BY rowid").map(\.values)
        #expect(log == [[.integer(1), "integer"], [.real(2.5), "real"], ["three", "text"], [.blob([4]), "blob"], [.null, "null"]])
        #expect(try db.scalar("SELECT count(*) FROM t", as: Int.self) == 5)
        // The caller's own count and rowid, not the procedure's.
        #expect(db.changes == 5)
        #expect(db.lastInsertRowid == 5)
    }

    /// A failure inside the procedure fails the caller with its code and message, and a caller
    /// that writes undoes the procedure's writes with its own.
    @Test func aFailureFailsTheCallerWithItsCodeAndIsUndoneWithIt() throws {
        let db = try Self.connection()
        try db.execute("CREATE TEMP TRIGGER t_note BEFORE INSERT ON t BEGIN SELECT note(NEW.v); END")
        try db.execute("INSERT INTO log VALUES (3, 'integer')")
        try db.execute("BEGIN")
        let failure = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t(v) VALUES (1), (2), (3)") }
        #expect(failure?.resultCode == .constraintUnique)
        #expect("\(failure.map { "\($0)" } ?? "")".contains("UNIQUE constraint failed: log.v"))
        // The transaction goes on: the statement's writes and the procedure's were undone, the
        // earlier one stays.
        #expect(db.isInTransaction)
        #expect(try db.fetchAll("SELECT v FROM log").map(\.values) == [[.integer(3)]])
        #expect(try db.scalar("SELECT count(*) FROM t", as: Int.self) == 0)
        try db.execute("COMMIT")
    }

    @Test func definingTheNameAgainReplacesIt() throws {
        let db = try Self.connection()
        #expect(db.hasProcedure("note"))
        #expect(!db.hasProcedure("other"))
        try db.defineProcedure("note") { _, _ throws(SQLiteError) in throw .misuse("no more notes") }
        let failure = #expect(throws: SQLiteError.self) { try db.execute("SELECT note(1)") }
        #expect("\(failure.map { "\($0)" } ?? "")".contains("no more notes"))
        #expect(try db.scalar("SELECT count(*) FROM log", as: Int.self) == 0)
    }
}
