#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// The rows a statement passed to a recorder function (`Connection.defineRowRecorder`), in the
/// order SQLite called it: each row's identity and the digest of all its arguments (`RowDigest`).
/// Used on the connection's thread only.
package final class RowRecorder: @unchecked Sendable {
    /// One recorded call.
    package struct Entry: Sendable, Equatable {
        /// The first argument: the row's identity.
        package let identity: Value
        /// `RowDigest` of every argument, the identity included (`ferry_row_digest` of the same values).
        package let digest: UInt64
    }

    /// The rows recorded since the last `reset()` or `take()`.
    package private(set) var entries: [Entry] = []

    init() {}

    /// Forgets every row recorded (before a statement whose calls are to be collected).
    package func reset() { entries.removeAll(keepingCapacity: true) }

    /// The rows recorded, forgotten here.
    package func take() -> [Entry] {
        defer { entries = [] }
        return entries
    }

    func append(_ entry: Entry) { entries.append(entry) }
}

extension Connection {
    /// Defines `name(identity, v1, ..., vn)` on this connection: each call appends the identity and
    /// the digest of all its arguments (`RowDigest`) to the returned recorder, and returns 1. A statement records exactly the rows it evaluated the call for, e.g.
    /// `WHERE CASE WHEN <filter> THEN name(rowid) END` records the rows the filter matched in that
    /// very evaluation, so what a statement decided is known without evaluating anything again.
    ///
    /// The function is direct-only (`SQLITE_DIRECTONLY`): triggers and views cannot call it. It is
    /// not deterministic, so SQLite calls it once per row it evaluates. Defining a function makes
    /// SQLite compile the connection's prepared statements again at their next use: define it once.
    package func defineRowRecorder(_ name: String) throws(SQLiteError) -> RowRecorder {
        guard let db = handle else { throw .connectionClosed }
        let recorder = RowRecorder()
        let rc = sqlite3_create_function_v2(db, name, -1, SQLITE_UTF8 | SQLITE_DIRECTONLY, Unmanaged.passRetained(recorder).toOpaque(), { context, count, arguments in
            let recorder = Unmanaged<RowRecorder>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
            guard count > 0, let arguments else {
                sqlite3_result_error(context, "a row recorder takes the row's identity first", -1)
                return
            }
            let argument = arguments[0]!
            let identity: Value = sqlite3_value_type(argument) == SQLITE_INTEGER ? .integer(sqlite3_value_int64(argument)) : Value(sqliteValue: argument)
            recorder.append(RowRecorder.Entry(identity: identity, digest: RowDigest.digest(Int(count), arguments)))
            sqlite3_result_int(context, 1)
        }, nil, nil, { pointer in
            if let pointer { Unmanaged<RowRecorder>.fromOpaque(pointer).release() }
        })
        guard rc == SQLITE_OK else { throw .sqlite(code: ResultCode(rawValue: rc), message: "cannot define \(name)", sql: nil) }
        procedureNames.insert(name)
        return recorder
    }
}
