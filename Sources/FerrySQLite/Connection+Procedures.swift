#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// SQL functions called for what they do rather than for their result: a procedure runs Swift
/// code, which may run statements on the same connection, while the statement that called it runs.
///
/// A statement compiles everything its triggers name, and begins a read transaction on every
/// database they name, whether their conditions let them run or not. A trigger that calls a
/// procedure instead names nothing: the procedure's statements are compiled and begin their
/// transactions only when it is called.
extension Connection {
    /// Defines `name(argument, ...)` on this connection (any number of arguments): each call runs
    /// `body` with the connection and the argument values, and returns NULL. An error `body`
    /// throws fails the calling statement with its message and result code.
    ///
    /// `body` runs on the connection's thread, inside the calling statement: statements it runs
    /// (through this connection) share that statement's transaction, and when a statement that
    /// writes fails, SQLite undoes their writes with its own. `body` must not close the
    /// connection, nor end the transaction. Defining the same name again replaces the procedure.
    package func defineProcedure(_ name: String, _ body: @escaping (Connection, [Value]) throws(SQLiteError) -> Void) throws(SQLiteError) {
        try defineQueryFunction(name) { connection, values throws(SQLiteError) in
            try body(connection, values)
            return .null
        }
    }

    /// Defines `name(argument, ...)` on this connection (any number of arguments) as a function
    /// whose value `body` computes, with the connection and the argument values: a procedure
    /// (`defineProcedure`) that answers. `body` may run statements on the same connection, under
    /// the same rules as a procedure's; it must not write what the calling statement reads.
    package func defineQueryFunction(_ name: String, _ body: @escaping (Connection, [Value]) throws(SQLiteError) -> Value) throws(SQLiteError) {
        guard let db = handle else { throw .connectionClosed }
        let box = ProcedureBox(connection: self, body: body)
        let rc = sqlite3_create_function_v2(db, name, -1, SQLITE_UTF8, Unmanaged.passRetained(box).toOpaque(), { context, count, arguments in
            let box = Unmanaged<ProcedureBox>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
            guard let connection = box.connection else {
                sqlite3_result_error_code(context, SQLITE_MISUSE)
                return
            }
            var values: [Value] = []
            values.reserveCapacity(Int(count))
            for index in 0..<Int(count) { values.append(Value(sqliteValue: arguments![index]!)) }
            do throws(SQLiteError) {
                switch try box.body(connection, values) {
                case .null: sqlite3_result_null(context)
                case .integer(let value): sqlite3_result_int64(context, value)
                case .real(let value): sqlite3_result_double(context, value)
                case .text(let value): sqlite3_result_text(context, value, -1, SQLITE_TRANSIENT)
                case .blob(let bytes):
                    bytes.withUnsafeBytes { buffer in
                        sqlite3_result_blob(context, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count), SQLITE_TRANSIENT)
                    }
                }
            } catch {
                let message = error.procedureMessage
                sqlite3_result_error(context, message, -1)
                sqlite3_result_error_code(context, error.resultCode.rawValue)
            }
        }, nil, nil, { pointer in
            if let pointer { Unmanaged<ProcedureBox>.fromOpaque(pointer).release() }
        })
        guard rc == SQLITE_OK else { throw .sqlite(code: ResultCode(rawValue: rc), message: "cannot define \(name)", sql: nil) }
        procedureNames.insert(name)
    }

    /// True when a procedure (or query function) was defined on this connection under exactly this name (a check
    /// cheap enough for every use of a connection). Defining one makes SQLite compile every
    /// prepared statement of the connection again at its next use: define it once.
    package func hasProcedure(_ name: String) -> Bool { procedureNames.contains(name) }
}

/// A procedure's body and its connection, held weakly: the connection owns the handle, which
/// owns the box.
final class ProcedureBox {
    weak var connection: Connection?
    let body: (Connection, [Value]) throws(SQLiteError) -> Value
    init(connection: Connection, body: @escaping (Connection, [Value]) throws(SQLiteError) -> Value) {
        self.connection = connection
        self.body = body
    }
}

extension Value {
    /// The value of a function argument, in its storage class.
    init(sqliteValue value: OpaquePointer) {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: self = .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: self = .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            let count = Int(sqlite3_value_bytes(value))
            let bytes = sqlite3_value_text(value).map { UnsafeBufferPointer(start: $0, count: count) }
            self = .text(bytes.map { String(decoding: $0, as: UTF8.self) } ?? "")
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            let bytes = sqlite3_value_blob(value).map { UnsafeRawBufferPointer(start: $0, count: count) }
            self = .blob(bytes.map { Array($0) } ?? [])
        default: self = .null
        }
    }
}

extension SQLiteError {
    /// The message a procedure's failure gives the statement that called it.
    var procedureMessage: String {
        if case .sqlite(_, let message, _) = self { return message }
        return "\(self)"
    }
}
