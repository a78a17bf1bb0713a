/// Every error the connection layer throws: a failure SQLite reported, with its extended result
/// code, message and SQL, or a failure of the layer itself (a wrong key, a missing file, bad
/// arguments, a closed connection, a cancelled task), each with the result code SQLite would give
/// it (`resultCode`). No error message ever contains key material.
///
/// `Ferry` surfaces these as `SQLiteError` (same cases, same payloads).
public enum SQLiteError: Error, Sendable, Hashable {
    /// SQLite reported an error while running `sql` (nil when no statement was involved).
    case sqlite(code: ResultCode, message: String, sql: String?)
    /// The file is encrypted with another key (or other cipher settings), is encrypted and no key was
    /// given, or is not a database at all. Raised when the database is opened, not at a later query.
    case wrongKeyOrNotADatabase(path: String)
    /// The database file does not exist and the connection may not create it.
    case fileNotFound(path: String)
    /// The operation is not available in this build or on this database (e.g. encryption with the
    /// `SystemSQLite` trait).
    case unsupported(String)
    /// The loaded SQLite library is not the one this build was compiled for.
    case engineMismatch(String)
    /// The arguments do not fit the statement (count, names, or values).
    case invalidArguments(String)
    /// The connection was used after it was closed.
    case connectionClosed
    /// The Swift task running the operation was cancelled; the database was interrupted and the
    /// current transaction rolled back.
    case cancelled
    /// The library was used in a way it does not allow (e.g. a reentrant write).
    case misuse(String)
    /// A row could not be decoded into the requested type.
    case decodingFailed(String)

    /// The result code: SQLite's own for `.sqlite`, and for the layer's failures the code SQLite
    /// gives the same failure (`.notADatabase` for a wrong key, `.cantOpen` for a missing file,
    /// `.range` for bad arguments, `.mismatch` for a value that does not decode, `.interrupt` for a
    /// cancellation, `.misuse` for a closed connection or a misuse, `.error` otherwise).
    public var resultCode: ResultCode {
        switch self {
        case .sqlite(let code, _, _): return code
        case .wrongKeyOrNotADatabase: return .notADatabase
        case .fileNotFound: return .cantOpen
        case .invalidArguments: return .range
        case .decodingFailed: return .mismatch
        case .cancelled: return .interrupt
        case .connectionClosed, .misuse: return .misuse
        case .unsupported, .engineMismatch: return .error
        }
    }

    /// The SQL that failed, when SQLite was running a statement.
    public var sql: String? {
        if case .sqlite(_, _, let sql) = self { return sql }
        return nil
    }
}

extension SQLiteError: CustomStringConvertible {
    /// A one-line description fit for a log.
    public var description: String {
        switch self {
        case .sqlite(let code, let message, let sql):
            var text = "SQLite error \(code.primaryCode) (extended \(code.extendedCode)): \(message)"
            if let sql { text += " - while executing `\(sql)`" }
            return text
        case .wrongKeyOrNotADatabase(let path):
            return "cannot read \(path): wrong key or cipher settings, missing key, or not a database"
        case .fileNotFound(let path):
            return "no database file at \(path)"
        case .unsupported(let what):
            return "unsupported: \(what)"
        case .engineMismatch(let what):
            return "SQLite engine mismatch: \(what)"
        case .invalidArguments(let what):
            return "invalid arguments: \(what)"
        case .connectionClosed:
            return "the connection is closed"
        case .cancelled:
            return "the operation was cancelled"
        case .misuse(let what):
            return "misuse: \(what)"
        case .decodingFailed(let what):
            return "cannot decode row: \(what)"
        }
    }
}

/// An error type a connection-layer failure converts to: the error type of typed-throws bodies
/// given to `Connection.transaction`, `Connection.savepoint` and `DatabasePool`'s reads and writes
/// (`throws(E)`), so that a body that throws only `E` gets only `E` back, the layer's own failures
/// (BEGIN, COMMIT, a closed pool, a cancellation) included, converted by `init(_:)`.
public protocol SQLiteErrorConvertible: Error {
    /// The connection layer's error as this type.
    init(_ error: SQLiteError)
    /// True when the error says a statement was stopped: cancelled, or interrupted
    /// (`SQLITE_INTERRUPT`). The pool turns it into a cancellation when the caller's task was
    /// cancelled, whatever type the caller's body throws.
    var isInterruption: Bool { get }
}

extension SQLiteError: SQLiteErrorConvertible {
    /// The error itself.
    public init(_ error: SQLiteError) { self = error }

    /// True for `.cancelled` and `SQLITE_INTERRUPT`.
    public var isInterruption: Bool { self == .cancelled || resultCode.primary == .interrupt }
}

extension SQLiteErrorConvertible {
    /// Runs an untyped-throwing `body` whose errors are the layer's or `Self`, and throws them as `Self`.
    /// (The layer's generic code runs bodies untyped; a body of type `() throws(Self) -> T` cannot
    /// throw anything else, so the last conversion never happens in practice.)
    static func converting<T>(_ body: () throws -> T) throws(Self) -> T {
        do { return try body() } catch let error as Self {
            throw error
        } catch let error as SQLiteError {
            throw Self(error)
        } catch {
            throw Self(.misuse("a typed body threw \(type(of: error)), not \(Self.self)"))
        }
    }

    /// Async form of `converting(_:)`.
    static func converting<T>(_ body: () async throws -> T) async throws(Self) -> T {
        do { return try await body() } catch let error as Self {
            throw error
        } catch let error as SQLiteError {
            throw Self(error)
        } catch {
            throw Self(.misuse("a typed body threw \(type(of: error)), not \(Self.self)"))
        }
    }
}
