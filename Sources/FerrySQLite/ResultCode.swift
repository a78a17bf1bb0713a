/// A SQLite result code: primary (low 8 bits) and extended (the whole value).
///
/// Compare with the named constants: `error.resultCode == .constraintUnique`, or test the primary
/// code with `error.resultCode.primary == .constraint`.
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The extended result code as SQLite reports it.
    public let rawValue: Int32

    /// Creates a result code from SQLite's integer value.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary result code (the low 8 bits), e.g. `.constraint` for `.constraintUnique`.
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

    /// The primary code as an integer.
    public var primaryCode: Int32 { rawValue & 0xFF }

    /// The extended code as an integer.
    public var extendedCode: Int32 { rawValue }

    public var description: String { "\(primaryCode)/\(rawValue)" }

    /// SQLITE_OK
    public static let ok = ResultCode(rawValue: 0)
    /// SQLITE_ERROR: generic error (e.g. a SQL error or missing database).
    public static let error = ResultCode(rawValue: 1)
    /// SQLITE_INTERNAL
    public static let `internal` = ResultCode(rawValue: 2)
    /// SQLITE_PERM
    public static let perm = ResultCode(rawValue: 3)
    /// SQLITE_ABORT
    public static let abort = ResultCode(rawValue: 4)
    /// SQLITE_BUSY: the database file is locked by another connection.
    public static let busy = ResultCode(rawValue: 5)
    /// SQLITE_LOCKED: a table is locked by this connection.
    public static let locked = ResultCode(rawValue: 6)
    /// SQLITE_NOMEM
    public static let noMemory = ResultCode(rawValue: 7)
    /// SQLITE_READONLY
    public static let readonly = ResultCode(rawValue: 8)
    /// SQLITE_INTERRUPT: the operation was interrupted.
    public static let interrupt = ResultCode(rawValue: 9)
    /// SQLITE_IOERR: an I/O error.
    public static let ioError = ResultCode(rawValue: 10)
    /// SQLITE_CORRUPT
    public static let corrupt = ResultCode(rawValue: 11)
    /// SQLITE_FULL: the disk is full.
    public static let full = ResultCode(rawValue: 13)
    /// SQLITE_CANTOPEN
    public static let cantOpen = ResultCode(rawValue: 14)
    /// SQLITE_SCHEMA
    public static let schema = ResultCode(rawValue: 17)
    /// SQLITE_TOOBIG
    public static let tooBig = ResultCode(rawValue: 18)
    /// SQLITE_CONSTRAINT: a constraint was violated.
    public static let constraint = ResultCode(rawValue: 19)
    /// SQLITE_MISMATCH
    public static let mismatch = ResultCode(rawValue: 20)
    /// SQLITE_MISUSE
    public static let misuse = ResultCode(rawValue: 21)
    /// SQLITE_RANGE: a parameter index is out of range.
    public static let range = ResultCode(rawValue: 25)
    /// `SQLITE_AUTH`: the authorizer refused the statement.
    public static let auth = ResultCode(rawValue: 23)
    /// SQLITE_NOTADB: the file is not a database, or is encrypted with another key.
    public static let notADatabase = ResultCode(rawValue: 26)
    /// SQLITE_ROW
    public static let row = ResultCode(rawValue: 100)
    /// SQLITE_DONE
    public static let done = ResultCode(rawValue: 101)

    /// SQLITE_CONSTRAINT_CHECK
    public static let constraintCheck = ResultCode(rawValue: 275)
    /// SQLITE_CONSTRAINT_FOREIGNKEY
    public static let constraintForeignKey = ResultCode(rawValue: 787)
    /// SQLITE_CONSTRAINT_NOTNULL
    public static let constraintNotNull = ResultCode(rawValue: 1299)
    /// SQLITE_CONSTRAINT_PRIMARYKEY
    public static let constraintPrimaryKey = ResultCode(rawValue: 1555)
    /// SQLITE_CONSTRAINT_TRIGGER
    public static let constraintTrigger = ResultCode(rawValue: 1811)
    /// SQLITE_CONSTRAINT_UNIQUE
    public static let constraintUnique = ResultCode(rawValue: 2067)
    /// SQLITE_CONSTRAINT_ROWID
    public static let constraintRowID = ResultCode(rawValue: 2579)
    /// SQLITE_CONSTRAINT_FUNCTION: a function refused a value (Ferry's `ferry_time_value` does, for
    /// a value that reads the clock).
    public static let constraintFunction = ResultCode(rawValue: 3091)
    /// SQLITE_ABORT_ROLLBACK: the statement was aborted because its transaction was rolled back.
    public static let abortRollback = ResultCode(rawValue: 516)
    /// SQLITE_IOERR_SHORT_READ
    public static let ioErrorShortRead = ResultCode(rawValue: 522)
    /// SQLITE_READONLY_DBMOVED
    public static let readonlyDatabaseMoved = ResultCode(rawValue: 1032)
}
