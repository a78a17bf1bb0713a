import FerrySQLite

/// Every error Ferry throws.
///
/// Errors are data: SQLite's failures keep the primary and extended result codes, SQLite's message
/// and the SQL that failed; Ferry's own failures say precisely what is wrong. No error message ever
/// contains key material. The connection layer's errors (`SQLiteError`) arrive as the cases of the
/// first group, with the same payloads.
public enum FerryError: SQLiteErrorConvertible, Sendable, Hashable {
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

    // MARK: Online data migration

    /// A migration plan is invalid or conflicts with the plan registered in the database.
    case invalidPlan(String)
    /// A plan file (`MigrationPlanFile`) cannot be read, is malformed, or describes an invalid
    /// plan; `reason` is one line naming the offending field.
    case invalidPlanFile(path: String, reason: String)
    /// A table does not exist (`schema` is the database it was looked up in).
    case noSuchTable(name: String, schema: String)
    /// The target table cannot be fed by the source table; each problem names a column or constraint.
    case schemaMismatch(table: String, problems: [String])
    /// A filter is not a valid expression over the source row.
    case invalidFilter(filter: String, reason: String)
    /// An encrypted source registered in the database was opened without its key.
    case missingSourceKey(path: String)
    /// A registered migration source cannot be used: its file is missing, was deleted or renamed
    /// while the database was open, or cannot be opened or read (`reason` says which, with
    /// SQLite's error). The migration's state in the target is intact: it resumes when the file is
    /// back at `path`.
    case sourceUnavailable(path: String, reason: String)
    /// The file at a registered source's path is not the file that was registered (another
    /// database put in its place, or the registered one rewritten or re-encrypted): `reason` says
    /// what differs. Nothing is read from it or deleted in it; the migration resumes when the
    /// registered file (or a byte copy of it) is back at `path`.
    case sourceMismatch(path: String, reason: String)
    /// Another `FerryDatabase` (in another process, or another instance in this one) has the
    /// target open: one instance at a time owns a target and its migrations (an exclusive lock on
    /// `<path>-ferry.lock`). Nothing was changed.
    case migrationOwnedByAnotherProcess(path: String)
    /// Cleanup would delete source rows of `table` that never reached it: the source rows its
    /// mapping matches now are not the rows that moved (`reason` gives both counts). Nothing was
    /// deleted; the source keeps every row.
    case cleanupRefused(table: String, reason: String)
    /// A statement cannot run on a table while it is migrating; nothing was changed.
    case unsupportedDuringMigration(table: String, statement: String, reason: String)
    /// A row could not be decoded into the requested type.
    case decodingFailed(String)
    /// The statement would reach what Ferry protects on the app's connections: its catalog, an
    /// attached migration source, a registered source file, a pragma or function that bypasses the
    /// migration or its keys. Refused while SQLite compiled it (its authorizer): nothing of it ran.
    /// `object` names what was protected (a table of Ferry's state, `PRAGMA rekey`,
    /// `sqlcipher_export()`, ...).
    case accessDenied(object: String, statement: String, reason: String)

    // MARK: Schema migrations
    /// Two migrations were registered under the same identifier (or one reuses a merged identifier).
    case duplicateMigration(id: String)
    /// No registered migration has this identifier (e.g. the target of `migrate(_:upTo:)`).
    case unknownMigration(id: String)
    /// The database already applied `lastApplied`, which is registered after the requested `target`:
    /// migrations only run forward.
    case databaseBeyondMigration(target: String, lastApplied: String)
    /// A migration left a row in `table` whose `columns` reference `parentTable(parentColumns)` with no
    /// matching parent row; `row` shows the offending row (`rowid 3 [masterId:123 name:'Bobby']`).
    case foreignKeyViolation(table: String, columns: [String], parentTable: String, parentColumns: [String], row: String)
    /// A migration already applied to the database was changed since: its recorded checksum differs
    /// from the checksum of what is registered now. Shipped migrations are immutable; add a new one.
    case shippedMigrationChanged(id: String)
    /// The schema safety lint refused a statement of a migration: `rule` names the rule, `advice` the
    /// safe pattern to use instead (or how to opt out with a reason).
    case unsafeMigration(id: String, rule: SchemaLintRule, statement: String, advice: String)
    /// The schema safety lint cannot read `name` (a migration file, or the script given) as SQLite
    /// reads SQL: it holds a NUL byte (where SQLite stops reading) or bytes that are not UTF-8,
    /// starting at byte `offset` (from 0). Nothing was linted; the lint never passes what it
    /// cannot read.
    case unreadableSQL(name: String, offset: Int, reason: String)

    /// True for the errors of a source that cannot be used now (`sourceUnavailable`,
    /// `sourceMismatch`): the migration waits for the registered file to be back.
    public var isSourceUnavailable: Bool {
        switch self {
        case .sourceUnavailable, .sourceMismatch: return true
        default: return false
        }
    }

    /// The result code SQLite gives this failure, one answer per failure: SQLite's own extended
    /// code when SQLite raised the error; for the connection layer's failures the code SQLite
    /// gives the same failure, as `SQLiteError.resultCode` (`.notADatabase` for a wrong key,
    /// `.cantOpen` for a missing file, `.range` for bad arguments, `.mismatch` for a value that does
    /// not decode, `.interrupt` for a cancellation, `.misuse` for a closed connection or a misuse,
    /// `.error` otherwise); `.auth` for a statement the authorizer refused; nil for Ferry's own
    /// failures (a plan, a source, a migration).
    public var resultCode: ResultCode? {
        if let layer = connectionLayerError { return layer.resultCode }
        if case .accessDenied = self { return .auth }
        return nil
    }

    /// This error as the connection layer's, for the cases the two share (nil for Ferry's own).
    var connectionLayerError: SQLiteError? {
        switch self {
        case .sqlite(let code, let message, let sql): return .sqlite(code: code, message: message, sql: sql)
        case .wrongKeyOrNotADatabase(let path): return .wrongKeyOrNotADatabase(path: path)
        case .fileNotFound(let path): return .fileNotFound(path: path)
        case .unsupported(let what): return .unsupported(what)
        case .engineMismatch(let what): return .engineMismatch(what)
        case .invalidArguments(let what): return .invalidArguments(what)
        case .connectionClosed: return .connectionClosed
        case .cancelled: return .cancelled
        case .misuse(let what): return .misuse(what)
        case .decodingFailed(let what): return .decodingFailed(what)
        default: return nil
        }
    }

    /// True for `.cancelled` and for SQLite's `SQLITE_INTERRUPT`.
    public var isInterruption: Bool { self == .cancelled || resultCode?.primary == .interrupt }
}

extension FerryError {
    /// The connection layer's error as a `FerryError` (same case, same payload).
    public init(_ error: SQLiteError) {
        switch error {
        case .sqlite(let code, let message, let sql): self = .sqlite(code: code, message: message, sql: sql)
        case .wrongKeyOrNotADatabase(let path): self = .wrongKeyOrNotADatabase(path: path)
        case .fileNotFound(let path): self = .fileNotFound(path: path)
        case .unsupported(let what): self = .unsupported(what)
        case .engineMismatch(let what): self = .engineMismatch(what)
        case .invalidArguments(let what): self = .invalidArguments(what)
        case .connectionClosed: self = .connectionClosed
        case .cancelled: self = .cancelled
        case .misuse(let what): self = .misuse(what)
        case .decodingFailed(let what): self = .decodingFailed(what)
        }
    }
}

extension FerryError: CustomStringConvertible {
    /// A one-line description fit for a log.
    public var description: String {
        switch self {
        case .sqlite(let code, let message, let sql): return SQLiteError.sqlite(code: code, message: message, sql: sql).description
        case .wrongKeyOrNotADatabase(let path): return SQLiteError.wrongKeyOrNotADatabase(path: path).description
        case .fileNotFound(let path): return SQLiteError.fileNotFound(path: path).description
        case .unsupported(let what): return SQLiteError.unsupported(what).description
        case .engineMismatch(let what): return SQLiteError.engineMismatch(what).description
        case .invalidArguments(let what): return SQLiteError.invalidArguments(what).description
        case .connectionClosed: return SQLiteError.connectionClosed.description
        case .cancelled: return SQLiteError.cancelled.description
        case .misuse(let what): return SQLiteError.misuse(what).description
        case .invalidPlanFile(let path, let reason):
            return "invalid plan file \(path): \(reason)"
        case .invalidPlan(let what):
            return "invalid migration plan: \(what)"
        case .noSuchTable(let name, let schema):
            return "no such table: \(schema).\(name)"
        case .schemaMismatch(let table, let problems):
            return "table \(table) cannot be fed by its source: " + problems.joined(separator: "; ")
        case .invalidFilter(let filter, let reason):
            return "invalid filter `\(filter)`: \(reason)"
        case .missingSourceKey(let path):
            return "the migration source \(path) is encrypted: supply its cipher when opening the database"
        case .sourceMismatch(let path, let reason):
            return "the migration source \(path) is not the registered file: \(reason); nothing moves until the registered file is back at that path"
        case .sourceUnavailable(let path, let reason):
            return "the migration source \(path) is unavailable (\(reason)); the migration resumes when the file is back"
        case .migrationOwnedByAnotherProcess(let path):
            return "\(path) is open in another FerryDatabase (another process, or another instance in this one), which owns its migrations; close it first (lock file \(path)-ferry.lock)"
        case .cleanupRefused(let table, let reason):
            return "cleanup of \(table)'s source refused, nothing deleted: \(reason)"
        case .unsupportedDuringMigration(let table, let statement, let reason):
            return "cannot run `\(statement)` while \(table) is migrating: \(reason)"
        case .decodingFailed(let what):
            return "cannot decode row: \(what)"
        case .accessDenied(let object, let statement, let reason):
            return "refused `\(statement)`: \(object) \(reason)"
        // MARK: Schema migrations
        case .duplicateMigration(let id):
            return "migration \"\(id)\" is already registered"
        case .unknownMigration(let id):
            return "no registered migration is named \"\(id)\""
        case .databaseBeyondMigration(let target, let lastApplied):
            return "the database is already migrated beyond migration \"\(target)\" (it applied \"\(lastApplied)\")"
        case .foreignKeyViolation(let table, let columns, let parentTable, let parentColumns, let row):
            return "FOREIGN KEY constraint violation - from \(table)(\(columns.joined(separator: ", "))) to \(parentTable)(\(parentColumns.joined(separator: ", "))), in \(row)"
        case .shippedMigrationChanged(let id):
            return "migration \"\(id)\" changed after it was applied to this database; shipped migrations are immutable: restore it and register a new migration instead"
        case .unsafeMigration(let id, let rule, let statement, let advice):
            return "migration \"\(id)\" refused by safety rule \(rule): `\(statement)` - \(advice)"
        case .unreadableSQL(let name, let offset, let reason):
            return "cannot lint \(name): at byte offset \(offset), \(reason); nothing was linted"
        }
    }
}

/// Runs a connection-layer call and surfaces its `SQLiteError` as the `FerryError` with the same
/// case and payload: the one place where Ferry's code crosses from FerrySQLite's errors to its own.
/// `try sqlite(db.execute(sql))`.
@inline(__always)
func sqlite<T>(_ body: @autoclosure () throws(SQLiteError) -> T) throws(FerryError) -> T {
    do { return try body() } catch { throw FerryError(error) }
}

extension FerryError {
    /// Runs `body` for an API whose closure may throw the app's own errors: those pass unchanged,
    /// and the connection layer's errors surface as `FerryError` (never as `SQLiteError`).
    static func surfacing<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as SQLiteError { throw FerryError(error) }
    }

    /// Async form of `surfacing(_:)`.
    static func surfacing<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let error as SQLiteError { throw FerryError(error) }
    }
}
