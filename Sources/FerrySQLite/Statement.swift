#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// A prepared statement.
///
/// Obtain one with `Connection.prepare(_:)` (owned by you) or `Connection.cachedStatement(_:)`
/// (owned by the connection's cache and reused for the same SQL text). A statement belongs to its
/// connection and, like it, is used by one thread at a time.
public final class Statement {
    let handle: OpaquePointer
    let interrupter: Interrupter
    /// The SQL text the statement was prepared from.
    package let sql: String
    /// The number of result columns (0 for statements that return no rows). It follows schema
    /// changes: SQLite re-prepares the statement (e.g. `SELECT *` after `ALTER TABLE ADD COLUMN`).
    package var columnCount: Int { Int(sqlite3_column_count(handle)) }
    /// How many times SQLite compiled the statement again since it was prepared: after a schema
    /// change, or anything else that expires the connection's statements (a function defined, an
    /// authorizer installed). Each costs a compile at the statement's next run.
    package var recompileCount: Int { Int(sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_REPREPARE, 0)) }
    /// How many virtual-machine operations SQLite ran for this statement since it was prepared, over
    /// all its runs: a measure of a statement's work that does not depend on the clock (index
    /// entries visited, rows compared, sorted and returned).
    public var virtualMachineSteps: Int { Int(sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_VM_STEP, 0)) }
    /// True while a row iteration is in progress (the cache then hands out a fresh statement).
    var isIterating = false
    private var cachedColumnNames: [String]?
    /// SQLite's re-prepare count when `cachedColumnNames` was read: a re-prepare may change them.
    private var cachedColumnNamesGeneration: Int32 = -1

    /// Action codes the connection's authorizer saw while compiling the statement (bit `n` for code
    /// `n`; 0 without an authorizer).
    let actionBits: UInt64

    init(handle: OpaquePointer, sql: String, interrupter: Interrupter, actions: UInt64 = 0) {
        self.handle = handle
        self.interrupter = interrupter
        self.sql = sql
        self.actionBits = actions
    }

    /// True when compiling the statement asked the connection's authorizer for `action` (always
    /// false on a connection without an authorizer). Fixed at the first compile.
    package func requested(_ action: AuthorizerAction) -> Bool {
        action.rawValue >= 0 && action.rawValue < 64 && actionBits & (1 << UInt64(action.rawValue)) != 0
    }

    deinit { sqlite3_finalize(handle) }

    /// The result column names, in order (up to date after SQLite re-prepared the statement).
    package var columnNames: [String] {
        let generation = sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_REPREPARE, 0)
        if let cachedColumnNames, generation == cachedColumnNamesGeneration { return cachedColumnNames }
        let names = (0..<columnCount).map { String(cString: sqlite3_column_name(handle, Int32($0))) }
        cachedColumnNames = names
        cachedColumnNamesGeneration = generation
        return names
    }

    /// The number of parameters (the largest parameter index).
    package var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }

    /// The name of a parameter with its prefix (`:a`, `@a`, `$a`, `?NNN`), or nil for an anonymous `?`.
    /// - Parameter index: 1-based parameter index.
    package func parameterName(at index: Int) -> String? {
        sqlite3_bind_parameter_name(handle, Int32(index)).map { String(cString: $0) }
    }

    /// True when the statement does not write to the database (as `sqlite3_stmt_readonly` reports).
    package var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    // MARK: Binding

    /// Binds arguments, replacing any earlier binding. The statement is reset first.
    ///
    /// Positional arguments bind to indexes 1...n and must match the parameter count exactly.
    /// Named arguments bind by name (with or without the prefix); every parameter needs a value.
    /// - Throws: `SQLiteError.invalidArguments` when the arguments do not fit.
    package func bind(_ arguments: StatementArguments) throws(SQLiteError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        let count = parameterCount
        switch arguments {
        case .positional(let values):
            guard values.count == count else {
                throw .invalidArguments("expected \(count) argument(s), got \(values.count) for `\(sql)`")
            }
            for (i, value) in values.enumerated() {
                try bind(value, at: Int32(i + 1))
            }
        case .named(let values):
            for index in 1...max(count, 1) where index <= count {
                guard let fullName = parameterName(at: index) else {
                    throw .invalidArguments("parameter \(index) of `\(sql)` has no name; use positional arguments")
                }
                guard let value = arguments.value(at: index, named: fullName) else {
                    throw .invalidArguments("missing value for parameter \(fullName) in `\(sql)`")
                }
                try bind(value, at: Int32(index))
            }
            // Unused names are a mistake worth reporting: they usually mean a typo.
            if values.count > 0 {
                let known = Set((1...max(count, 1)).compactMap { $0 <= count ? parameterName(at: $0) : nil })
                for key in values.keys where !known.contains(key) && !known.contains(where: { $0.dropFirst() == key }) {
                    throw .invalidArguments("no parameter named \(key) in `\(sql)`")
                }
            }
        }
    }

    /// Binds one value at a 1-based parameter index.
    package func bind(_ value: Value, at index: Int32) throws(SQLiteError) {
        let rc: Int32
        switch value {
        case .null:
            rc = sqlite3_bind_null(handle, index)
        case .integer(let v):
            rc = sqlite3_bind_int64(handle, index, v)
        case .real(let v):
            rc = sqlite3_bind_double(handle, index, v)
        case .text(let s):
            var s = s
            rc = s.withUTF8 { buffer in
                guard let base = buffer.baseAddress, buffer.count > 0 else {
                    return sqlite3_bind_text(handle, index, "", 0, SQLITE_TRANSIENT)
                }
                return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    sqlite3_bind_text(handle, index, $0, Int32(buffer.count), SQLITE_TRANSIENT)
                }
            }
        case .blob(let bytes):
            rc = bytes.withUnsafeBytes { buffer in
                // A zero-length blob must still be a blob, not NULL: bind_zeroblob(0) does that.
                guard let base = buffer.baseAddress, buffer.count > 0 else { return sqlite3_bind_zeroblob(handle, index, 0) }
                return sqlite3_bind_blob(handle, index, base, Int32(buffer.count), SQLITE_TRANSIENT)
            }
        }
        guard rc == SQLITE_OK else {
            throw SQLiteError.sqlite(code: ResultCode(rawValue: rc), message: String(cString: sqlite3_errstr(rc)), sql: sql)
        }
    }

    // MARK: Stepping

    /// Resets the statement so it can run again (bindings are kept).
    package func reset() {
        isIterating = false
        sqlite3_reset(handle)
    }

    /// Advances to the next row. Returns true when a row is available, false when done.
    /// - Throws: `SQLiteError.sqlite` on failure (the statement is then reset),
    ///   `SQLiteError.connectionClosed` when its connection was closed, `SQLiteError.cancelled` after a
    ///   cancel request of the pool.
    package func step() throws(SQLiteError) -> Bool {
        if interrupter.isConnectionClosed {
            isIterating = false
            throw .connectionClosed
        }
        if interrupter.isCancelRequested {
            isIterating = false
            sqlite3_reset(handle)
            throw .cancelled
        }
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW:
            isIterating = true
            return true
        case SQLITE_DONE:
            isIterating = false
            return false
        default:
            isIterating = false
            let error = SQLiteError.fromConnection(sqlite3_db_handle(handle), code: rc, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// The value of a result column of the current row (0-based).
    package func column(_ index: Int) -> Value {
        let i = Int32(index)
        switch sqlite3_column_type(handle, i) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(handle, i))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(handle, i))
        case SQLITE_TEXT:
            guard let p = sqlite3_column_text(handle, i) else { return .text("") }
            let n = Int(sqlite3_column_bytes(handle, i))
            return .text(String(decoding: UnsafeBufferPointer(start: p, count: n), as: UTF8.self))
        case SQLITE_BLOB:
            let n = Int(sqlite3_column_bytes(handle, i))
            guard n > 0, let p = sqlite3_column_blob(handle, i) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: p, count: n)))
        default:
            return .null
        }
    }

    /// An integer result column of the current row, without building a `Value`.
    package func int64(_ index: Int) -> Int64 { sqlite3_column_int64(handle, Int32(index)) }

    /// True when a result column of the current row is NULL.
    package func isNull(_ index: Int) -> Bool { sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL }

    /// The current row.
    package func currentRow() -> Row {
        var values: [Value] = []
        values.reserveCapacity(columnCount)
        for i in 0..<columnCount { values.append(column(i)) }
        return Row(columnNames: columnNames, values: values)
    }

    // MARK: Running

    /// Binds the arguments (when given) and runs the statement to completion, discarding rows.
    public func execute(_ arguments: StatementArguments? = nil) throws(SQLiteError) {
        if let arguments { try bind(arguments) } else { sqlite3_reset(handle) }
        defer { reset() }
        while try step() {}
    }

    /// Runs a statement without parameters to completion, as a script would: no cancel check
    /// (`BEGIN`, `COMMIT`, `ROLLBACK` and savepoints end what a cancelled statement began).
    func executeUncancellable() throws(SQLiteError) {
        sqlite3_reset(handle)
        defer { reset() }
        var rc = sqlite3_step(handle)
        while rc == SQLITE_ROW { rc = sqlite3_step(handle) }
        guard rc == SQLITE_DONE else { throw .fromConnection(sqlite3_db_handle(handle), code: rc, sql: sql) }
    }

    /// Binds the arguments (when given) and returns every row.
    public func fetchAll(_ arguments: StatementArguments? = nil) throws(SQLiteError) -> [Row] {
        if let arguments { try bind(arguments) } else { sqlite3_reset(handle) }
        defer { reset() }
        var rows: [Row] = []
        while try step() { rows.append(currentRow()) }
        return rows
    }

    /// Binds the arguments (when given) and returns the first row, or nil.
    public func fetchOne(_ arguments: StatementArguments? = nil) throws(SQLiteError) -> Row? {
        if let arguments { try bind(arguments) } else { sqlite3_reset(handle) }
        defer { reset() }
        return try step() ? currentRow() : nil
    }

    /// Binds the arguments (when given) and returns the first row's first column as an integer
    /// (SQLite's conversion), or nil when there is no row; builds no `Row`.
    package func firstInteger(_ arguments: StatementArguments? = nil) throws(SQLiteError) -> Int64? {
        if let arguments { try bind(arguments) } else { sqlite3_reset(handle) }
        defer { reset() }
        return try step() ? int64(0) : nil
    }

    /// Binds the arguments (when given) and calls `body` for each row with this statement positioned
    /// on it (read columns with `column(_:)`); no `Row` is allocated.
    package func forEachRow(_ arguments: StatementArguments? = nil, _ body: (Statement) throws -> Void) throws {
        if let arguments { try bind(arguments) } else { sqlite3_reset(handle) }
        defer { reset() }
        while try step() { try body(self) }
    }
}

/// SQLite's "copy the bytes now" destructor marker.
let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

extension SQLiteError {
    /// The error the connection reports for a failed call.
    static func fromConnection(_ db: OpaquePointer?, code: Int32, sql: String?) -> SQLiteError {
        let extended = db.map { sqlite3_extended_errcode($0) } ?? code
        let useExtended = (extended & 0xFF) == (code & 0xFF)
        let message = db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
        return .sqlite(code: ResultCode(rawValue: useExtended ? extended : code), message: message, sql: sql)
    }
}
