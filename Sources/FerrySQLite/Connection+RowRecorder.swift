#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// The row identities a statement passed to a recorder function (`Connection.defineRowRecorder`),
/// in the order SQLite called it. Used on the connection's thread only.
public final class RowRecorder: @unchecked Sendable {
    /// The identities recorded since the last `reset()` or `take()`.
    public private(set) var identities: [Value] = []

    init() {}

    /// Forgets every identity recorded (before a statement whose calls are to be collected).
    public func reset() { identities.removeAll(keepingCapacity: true) }

    /// The identities recorded, forgotten here.
    public func take() -> [Value] {
        defer { identities = [] }
        return identities
    }

    func append(_ value: Value) { identities.append(value) }
}

extension Connection {
    /// Defines `name(identity)` on this connection: each call appends its argument to the returned
    /// recorder and returns 1. A statement records exactly the rows it evaluated the call for, e.g.
    /// `WHERE CASE WHEN <filter> THEN name(rowid) END` records the rows the filter matched in that
    /// very evaluation, so what a statement decided is known without evaluating anything again.
    ///
    /// The function is direct-only (`SQLITE_DIRECTONLY`): triggers and views cannot call it. It is
    /// not deterministic, so SQLite calls it once per row it evaluates. Defining a function makes
    /// SQLite compile the connection's prepared statements again at their next use: define it once.
    public func defineRowRecorder(_ name: String) throws(SQLiteError) -> RowRecorder {
        guard let db = handle else { throw .connectionClosed }
        let recorder = RowRecorder()
        let rc = sqlite3_create_function_v2(db, name, 1, SQLITE_UTF8 | SQLITE_DIRECTONLY, Unmanaged.passRetained(recorder).toOpaque(), { context, _, arguments in
            let recorder = Unmanaged<RowRecorder>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
            let argument = arguments![0]!
            if sqlite3_value_type(argument) == SQLITE_INTEGER {
                recorder.append(.integer(sqlite3_value_int64(argument)))
            } else {
                recorder.append(Value(sqliteValue: argument))
            }
            sqlite3_result_int(context, 1)
        }, nil, nil, { pointer in
            if let pointer { Unmanaged<RowRecorder>.fromOpaque(pointer).release() }
        })
        guard rc == SQLITE_OK else { throw .sqlite(code: ResultCode(rawValue: rc), message: "cannot define \(name)", sql: nil) }
        procedureNames.insert(name)
        return recorder
    }
}
