#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif
import Foundation

/// One SQLite connection: open, prepare, execute, transact.
///
/// A connection is used by one thread at a time (use `DatabasePool` to share a database between
/// threads and tasks); its `interrupter` may be used from anywhere. Files open in WAL mode by default.
///
/// ```swift
/// let db = try Connection(path: "app.db", configuration: .init(cipher: .passphrase("secret")))
/// try db.execute("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, name TEXT)")
/// try db.execute("INSERT INTO t(name) VALUES (?)", ["a"])
/// let names: [String] = try db.fetchAll("SELECT name FROM t").map { try $0.column(0) }
/// ```
public final class Connection {
    /// The path the connection opened (`":memory:"` for an in-memory database).
    package let path: String
    /// The configuration it was opened with.
    package let configuration: Configuration
    /// A thread-safe handle that interrupts this connection's running statement.
    package let interrupter: Interrupter

    private(set) var handle: OpaquePointer?
    private var cache: [HashedSQL: Statement] = [:]
    /// Statements compiled as `.untrusted` (see `withStatementTrust`), apart from the trusted ones.
    private var untrustedCache: [HashedSQL: Statement] = [:]
    /// The installed authorizer, kept alive while SQLite calls it (see `setAuthorizer`).
    var authorizer: AuthorizerBox?
    var savepointCounter = 0
    /// The installed instruction counter, kept alive while SQLite calls it (see `setVMStepCounter`).
    var vmStepCounter: VMStepCounter?
    /// The installed WAL commit hook, kept alive while SQLite calls it (see `setWALCommitHook`).
    var walCommitHook: WALCommitHook?
    /// The names of the procedures defined on this connection (see `defineProcedure`).
    var procedureNames: Set<String> = []
    /// What SQL's `changes()` reports (see `reportChanges(_:)`); the function holds it unretained.
    let reportedChanges = ReportedChanges()
    /// The edit recorder defined on this connection, if any (see `defineEditRecorder`).
    package internal(set) var editRecorder: EditRecorder?
    /// Main's schema version when the connection last made sure its copy of main's schema was
    /// current (its owner's bookkeeping: Ferry's reader skips that check while the version stays).
    package var schemaVersionChecked: Int?
    /// When the connection last checked that its attached files are still the ones at their paths
    /// (`fileHasMoved(schema:)`; its owner's bookkeeping: Ferry's app connections check at most
    /// once per `FerryDatabase.Options.sourceFileCheckInterval`).
    package var attachedFilesCheckedAt: ContinuousClock.Instant?

    /// Opens a database file (or `":memory:"`).
    ///
    /// With a cipher, the key and settings are applied and the first page is read at once, so a
    /// wrong key fails here, not at a later query.
    /// - Throws: `SQLiteError.fileNotFound` when the file is missing and may not be created,
    ///   `SQLiteError.wrongKeyOrNotADatabase` for a wrong key, missing key or a file that is not a
    ///   database, `SQLiteError.unsupported` for a cipher in a build without SQLCipher,
    ///   `SQLiteError.engineMismatch` when the loaded SQLite library is not the expected one.
    public init(path: String, configuration: Configuration = .init()) throws(SQLiteError) {
        try SQLiteEngine.checkLoadedLibrary()
        self.path = path
        self.configuration = configuration
        let isMemory = path == ":memory:" || path.isEmpty
        if !isMemory && !(configuration.createIfMissing && !configuration.readOnly) && !FileManager.default.fileExists(atPath: path) {
            throw .fileNotFound(path: path)
        }
        if configuration.cipher != nil && !SQLiteEngine.supportsEncryption {
            throw .unsupported("encryption needs the SQLCipher trait; this build links the system SQLite")
        }
        try configuration.cipher?.settings.check()

        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        if configuration.readOnly {
            flags |= SQLITE_OPEN_READONLY
        } else {
            flags |= SQLITE_OPEN_READWRITE
            if configuration.createIfMissing { flags |= SQLITE_OPEN_CREATE }
        }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, configuration.vfs)
        guard rc == SQLITE_OK, let db else {
            let error = SQLiteError.fromConnection(db, code: rc, sql: nil)
            sqlite3_close_v2(db)
            throw error
        }
        self.handle = db
        if configuration.lookasideSlots > 0 {
            // A performance setting: on failure (no memory) the connection keeps SQLite's default.
            _ = ferry_sqlite3_db_config_lookaside(db, 1200, Int32(clamping: configuration.lookasideSlots))
        }
        self.interrupter = Interrupter(db)
        do {
            try setUp(isMemory: isMemory)
        } catch {
            close()
            throw error
        }
    }

    /// Opens a private in-memory database.
    package static func inMemory(configuration: Configuration = .init()) throws(SQLiteError) -> Connection {
        try Connection(path: ":memory:", configuration: configuration)
    }

    private func setUp(isMemory: Bool) throws(SQLiteError) {
        guard let db = handle else { throw .connectionClosed }
        sqlite3_extended_result_codes(db, 1)
        try registerRowKeyFunctions()
        try registerTimeValueGuard()
        try registerAffinity()
        try registerRowDigestFunction()
        try registerChangesFunction()
        sqlite3_busy_timeout(db, Int32(clamping: Int64(configuration.busyTimeout / .milliseconds(1))))
        if configuration.traceStatements { SQLiteLog.traceStatements(of: db) }
        // Read the schema now: a wrong key or a file that is not a database fails here. Keying and
        // the first read (which derives the key) happen while no attach changes SQLCipher's
        // process-wide defaults, so this database never picks up another one's settings.
        let cipher = configuration.cipher
        try CipherDefaults.withStableDefaults { () throws(SQLiteError) in
            if let cipher { try applyCipher(cipher, schema: "main") }
            do throws(SQLiteError) {
                _ = try fetchOne("SELECT count(*) FROM sqlite_master")
            } catch let error where error.resultCode.primary == .notADatabase {
                // SQLCipher reads the file's salt once, when the key is set, and takes a random one
                // when that read fails: a transient I/O error then looks like a wrong key. Key the
                // database again (which reads the salt again) before saying so.
                guard let cipher else { throw .wrongKeyOrNotADatabase(path: path) }
                do throws(SQLiteError) {
                    try applyCipher(cipher, schema: "main")
                    _ = try fetchOne("SELECT count(*) FROM sqlite_master")
                } catch let error where error.resultCode.primary == .notADatabase {
                    throw .wrongKeyOrNotADatabase(path: path)
                }
            }
            // A new file derives its key when page 1 is first written, which setting the journal
            // mode does: still under the lock.
            if !isMemory && !configuration.readOnly {
                switch configuration.journalMode {
                case .wal: try execute("PRAGMA journal_mode = WAL")
                case .delete: try execute("PRAGMA journal_mode = DELETE")
                case .keep: break
                }
            }
        }
        if let synchronous = configuration.synchronous {
            try execute("PRAGMA synchronous = \(synchronous.rawValue)")
        }
        try execute("PRAGMA foreign_keys = \(configuration.foreignKeys ? "ON" : "OFF")")
        for statement in configuration.prepareStatements {
            try execute(statement)
        }
    }

    /// Keys a schema of this connection (`main`, or an attached database not yet read) and applies
    /// its cipher settings. The key bytes never leave `SecretBytes`.
    func applyCipher(_ cipher: Cipher, schema: String) throws(SQLiteError) {
        #if SQLCipher
        guard let db = handle else { throw .connectionClosed }
        // The codec starts from the process-wide defaults, which an attach elsewhere may be
        // changing for a moment: callers key only inside `CipherDefaults.withStableDefaults`.
        let rc = cipher.key.material.withBytes { bytes in
            sqlite3_key_v2(db, schema, bytes.baseAddress, Int32(bytes.count))
        }
        guard rc == SQLITE_OK else { throw .fromConnection(db, code: rc, sql: nil) }
        for pragma in cipher.settings.pragmas {
            try execute("PRAGMA \(quoteIdentifier(schema)).\(pragma.name) = \(pragma.value)")
        }
        #else
        throw .unsupported("encryption needs the SQLCipher trait; this build links the system SQLite")
        #endif
    }

    deinit { close() }

    /// Closes the connection. Statements still held by the caller stay valid objects but fail to run.
    /// Closing twice does nothing.
    public func close() {
        guard let db = handle else { return }
        interrupter.invalidate()
        cache.removeAll()
        untrustedCache.removeAll()
        sqlite3_close_v2(db)  // zombie until outstanding statements are finalized
        handle = nil
    }

    /// True until `close()`.
    package var isOpen: Bool { handle != nil }

    func requireHandle() throws(SQLiteError) -> OpaquePointer {
        guard let handle else { throw .connectionClosed }
        return handle
    }

    // MARK: Statements

    /// Prepares one statement. The caller owns it.
    /// - Throws: `SQLiteError.sqlite` for invalid SQL, `SQLiteError.invalidArguments` when `sql` holds
    ///   more than one statement.
    package func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        let db = try requireHandle()
        var statement: OpaquePointer?
        var tailIsEmpty = true
        resetAuthorizerRecord()
        let rc = sql.withCString { start -> Int32 in
            var tail: UnsafePointer<CChar>?
            let rc = sqlite3_prepare_v2(db, start, -1, &statement, &tail)
            if rc == SQLITE_OK, let tail { tailIsEmpty = Connection.isBlankSQL(tail) }
            return rc
        }
        guard rc == SQLITE_OK else {
            throw .fromConnection(db, code: rc, sql: sql)
        }
        guard let statement else {
            throw .invalidArguments("no statement in `\(sql)`")
        }
        guard tailIsEmpty else {
            sqlite3_finalize(statement)
            throw .invalidArguments("`\(sql)` holds more than one statement; use execute(_:) without arguments for scripts")
        }
        return Statement(handle: statement, sql: sql, interrupter: interrupter, actions: authorizerActions)
    }

    /// A prepared statement from the connection's cache (keyed by SQL text and by the current
    /// `statementTrust`), prepared on first use. While a cached statement is iterating, a fresh
    /// statement is returned instead.
    public func cachedStatement(_ sql: String) throws(SQLiteError) -> Statement {
        try cachedStatement(HashedSQL(sql))
    }

    /// A prepared statement from the connection's cache, for SQL whose hash the caller keeps (a
    /// statement run often: its text is not hashed again).
    public func cachedStatement(_ sql: HashedSQL) throws(SQLiteError) -> Statement {
        if statementTrust == .untrusted { return try cachedStatement(sql, in: &untrustedCache) }
        return try cachedStatement(sql, in: &cache)
    }

    private func cachedStatement(_ sql: HashedSQL, in cache: inout [HashedSQL: Statement]) throws(SQLiteError) -> Statement {
        if let statement = cache[sql], !statement.isIterating {
            return statement
        }
        let statement = try prepare(sql.sql)
        if cache[sql] == nil {
            if cache.count >= configuration.statementCacheCapacity { cache.removeAll(keepingCapacity: true) }
            cache[sql] = statement
        }
        return statement
    }

    /// Runs one statement without arguments through the statement cache (a fixed statement run
    /// often: compiled once per connection).
    package func executeCached(_ sql: String) throws(SQLiteError) {
        try cachedStatement(sql).execute()
    }

    /// Runs one statement without arguments through the statement cache, by a key hashed once.
    package func executeCached(_ sql: HashedSQL) throws(SQLiteError) {
        try cachedStatement(sql).execute()
    }

    /// Runs a transaction-control statement (`BEGIN`, `COMMIT`, `ROLLBACK`, a savepoint's) through
    /// the statement cache: every `read { }` and `write { }` runs two of them, and compiling them
    /// anew (under the authorizer) took about 0.9 µs of an empty read's 5.3.
    /// Its compile (the first time) does not forget the authorizer's latest denial: a rollback that
    /// follows a refused statement must leave the reason for the caller's error.
    func executeTransactionControl(_ sql: String) throws(SQLiteError) {
        let denial = lastAuthorizerDenial
        defer { if let denial, lastAuthorizerDenial == nil { restoreAuthorizerDenial(denial) } }
        try cachedStatement(sql).executeUncancellable()
    }

    /// Empties the statement cache (SQLite re-prepares statements after schema changes by itself).
    package func clearStatementCache() {
        cache.removeAll()
        untrustedCache.removeAll()
    }

    /// Runs SQL. Without arguments `sql` may hold several statements (a script); with arguments it
    /// must hold exactly one.
    /// - Throws: `SQLiteError.invalidArguments` when a statement of a script has parameters (a script
    ///   binds nothing), or when the arguments do not fit; `SQLiteError.sqlite` when SQLite fails. The
    ///   statements of a script before the failing one stay executed.
    public func execute(_ sql: String, _ arguments: StatementArguments = .none) throws(SQLiteError) {
        if arguments.isEmpty {
            try executeScript(sql)
        } else {
            try cachedStatement(sql).execute(arguments)
        }
    }

    private func executeScript(_ sql: String) throws(SQLiteError) {
        let db = try requireHandle()
        var failure: SQLiteError?
        sql.withCString { start in
            var cursor: UnsafePointer<CChar>? = start
            while let current = cursor, current.pointee != 0 {
                var statement: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let rc = sqlite3_prepare_v2(db, current, -1, &statement, &tail)
                guard rc == SQLITE_OK else {
                    failure = .fromConnection(db, code: rc, sql: sql)
                    return
                }
                cursor = tail
                guard let statement else { continue }  // whitespace or comment only
                // A script binds nothing: running a statement with parameters would silently bind NULL.
                let parameterCount = sqlite3_bind_parameter_count(statement)
                if parameterCount > 0 {
                    let text = String(cString: sqlite3_sql(statement))
                    failure = .invalidArguments("`\(text)` has \(parameterCount) parameter(s) but no arguments were given")
                    sqlite3_finalize(statement)
                    return
                }
                var step = sqlite3_step(statement)
                while step == SQLITE_ROW { step = sqlite3_step(statement) }
                if step != SQLITE_DONE {
                    let text = String(cString: sqlite3_sql(statement))
                    failure = .fromConnection(db, code: step, sql: text)
                    sqlite3_finalize(statement)
                    return
                }
                sqlite3_finalize(statement)
            }
        }
        if let failure { throw failure }
    }

    /// Every row of a query.
    public func fetchAll(_ sql: String, _ arguments: StatementArguments = .none) throws(SQLiteError) -> [Row] {
        try cachedStatement(sql).fetchAll(arguments)
    }

    /// The first row of a query, or nil.
    public func fetchOne(_ sql: String, _ arguments: StatementArguments = .none) throws(SQLiteError) -> Row? {
        try cachedStatement(sql).fetchOne(arguments)
    }

    /// The first column of the first row, converted to `T`; nil when there is no row or it is NULL.
    public func scalar<T: SQLValueConvertible>(_ sql: String, _ arguments: StatementArguments = .none, as type: T.Type = T.self) throws(SQLiteError) -> T? {
        guard let row = try fetchOne(sql, arguments), row.count > 0, !row[0].isNull else { return nil }
        return try row.column(0)
    }

    // MARK: State

    /// Rows changed by the most recent INSERT, UPDATE or DELETE (`sqlite3_changes64`).
    public var changes: Int { handle.map { Int(sqlite3_changes64($0)) } ?? 0 }

    /// Rows changed since the connection opened (`sqlite3_total_changes64`).
    package var totalChanges: Int { handle.map { Int(sqlite3_total_changes64($0)) } ?? 0 }

    /// The rowid of the most recent successful INSERT (`sqlite3_last_insert_rowid`).
    public var lastInsertRowid: Int64 { handle.map { sqlite3_last_insert_rowid($0) } ?? 0 }

    /// Sets the value `lastInsertRowid` reports (`sqlite3_set_last_insert_rowid`).
    package func setLastInsertRowid(_ rowid: Int64) {
        if let handle { sqlite3_set_last_insert_rowid(handle, rowid) }
    }

    /// True when `schema` (main or an attached database) is read-only: opened with `readOnly`, or
    /// opened read-only by SQLite because the file or its directory cannot be written
    /// (`sqlite3_db_readonly`).
    package func isReadOnly(schema: String = "main") throws(SQLiteError) -> Bool {
        let db = try requireHandle()
        switch sqlite3_db_readonly(db, schema) {
        case 1: return true
        case 0: return false
        default: throw .invalidArguments("no database named \(schema) on this connection")
        }
    }

    /// The names of the connection's schemas (`main`, `temp`, then the attached ones), read from
    /// SQLite's own list (`sqlite3_db_name`) without compiling a statement: cheap enough to ask at
    /// every use of a connection, unlike `PRAGMA database_list`.
    package func schemaNames() throws(SQLiteError) -> [String] {
        let db = try requireHandle()
        var names: [String] = []
        var index: Int32 = 0
        while let name = sqlite3_db_name(db, index) {
            names.append(String(cString: name))
            index += 1
        }
        return names
    }

    /// The number of the connection's schemas (`main`, `temp` and the attached ones), counted without allocating.
    package func schemaCount() throws(SQLiteError) -> Int {
        let db = try requireHandle()
        var count: Int32 = 0
        while sqlite3_db_name(db, count) != nil { count += 1 }
        return Int(count)
    }

    /// True when the connection has a schema named `name` (`main`, `temp`, or an attached database),
    /// asked of SQLite without listing the names.
    package func hasSchema(_ name: String) throws(SQLiteError) -> Bool {
        let db = try requireHandle()
        return sqlite3_db_filename(db, name) != nil
    }

    /// True when `schema` has a table named `name`, compared as SQLite compares names (ASCII
    /// letters in either case).
    package func tableExists(_ name: String, schema: String = "main") throws(SQLiteError) -> Bool {
        try scalar("SELECT count(*) FROM \(Self.quoteIdentifier(schema)).sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE",
                   [.text(name)], as: Int.self) ?? 0 > 0
    }

    /// The most lookaside slots the connection has had in use at once (`SQLITE_DBSTATUS_LOOKASIDE_USED`
    /// high-water mark), and how many allocations found every slot taken (`..._MISS_FULL`).
    func lookasideUsage() -> (highWater: Int, missesWhenFull: Int) {
        guard let handle else { return (0, 0) }
        var current: Int32 = 0
        var highWater: Int32 = 0
        var misses: Int32 = 0
        sqlite3_db_status(handle, SQLITE_DBSTATUS_LOOKASIDE_USED, &current, &highWater, 0)
        sqlite3_db_status(handle, SQLITE_DBSTATUS_LOOKASIDE_MISS_FULL, &current, &misses, 0)
        return (Int(highWater), Int(misses))
    }

    /// True when the file of `schema` (main or an attached database) was deleted or renamed since
    /// the connection opened it (`SQLITE_FCNTL_HAS_MOVED`): the connection still reads the old file,
    /// which no longer is the one at its path. False for in-memory and temporary databases.
    public func fileHasMoved(schema: String = "main") throws(SQLiteError) -> Bool {
        let db = try requireHandle()
        var moved: Int32 = 0
        let rc = sqlite3_file_control(db, schema, SQLITE_FCNTL_HAS_MOVED, &moved)
        switch rc {
        case SQLITE_OK: return moved != 0
        case SQLITE_NOTFOUND: return false  // no file behind the schema
        default: throw .fromConnection(db, code: rc, sql: nil)
        }
    }

    /// True inside an explicit transaction.
    package var isInTransaction: Bool { handle.map { sqlite3_get_autocommit($0) == 0 } ?? false }

    /// Interrupts the running statement (same as `interrupter.interrupt()`).
    package func interrupt() { interrupter.interrupt() }

    // MARK: Helpers

    /// The identifier in double quotes, with inner quotes doubled.
    package func quoteIdentifier(_ name: String) -> String { Connection.quoteIdentifier(name) }

    /// The identifier in double quotes, with inner quotes doubled.
    package static func quoteIdentifier(_ name: String) -> String {
        "\"" + name.replacingAll("\"", with: "\"\"") + "\""
    }

    /// True when the rest of a SQL text holds only whitespace, `;` and comments.
    static func isBlankSQL(_ text: UnsafePointer<CChar>) -> Bool {
        var p = text
        while p.pointee != 0 {
            switch UInt8(bitPattern: p.pointee) {
            case 0x20, 0x09, 0x0A, 0x0D, 0x0C, 0x3B:  // space, tab, newlines, form feed, ;
                p += 1
            case 0x2D where p[1] == 0x2D:  // -- comment
                while p.pointee != 0 && p.pointee != 0x0A { p += 1 }
            case 0x2F where p[1] == 0x2A:  // /* comment */
                p += 2
                while p.pointee != 0 && !(p.pointee == 0x2A && p[1] == 0x2F) { p += 1 }
                if p.pointee != 0 { p += 2 }
            default:
                return false
            }
        }
        return true
    }
}
