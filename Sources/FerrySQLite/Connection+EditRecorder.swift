#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// The rows a trigger passed to an edit recorder (`Connection.defineEditRecorder`): by table name,
/// the integers it was called with. Used on the connection's thread only.
package final class EditRecorder: @unchecked Sendable {
    /// The recorded integers by the name passed first, since the last `take()`.
    package private(set) var rows: [String: Set<Int64>] = [:]

    init() {}

    /// The tables renamed since the last `take()`, in order: the rows recorded under a name, here
    /// and by whoever took earlier ones, follow the table to its new name once the transaction
    /// commits (`rename(_:to:)`).
    package private(set) var renames: [(old: String, new: String)] = []

    /// True when nothing was recorded since the last `take()`.
    package var isEmpty: Bool { rows.isEmpty && renames.isEmpty }

    /// The rows and renames recorded, forgotten here.
    package func take() -> (rows: [String: Set<Int64>], renames: [(old: String, new: String)]) {
        defer { rows = [:]; renames = [] }
        return (rows, renames)
    }

    /// Records that the table `old` is named `new` from now on (any case): its rows recorded so far
    /// are under `new`, and the rename is passed on with them.
    package func rename(_ old: String, to new: String) {
        for name in rows.keys where name.lowercased() == old.lowercased() {
            rows[new, default: []].formUnion(rows.removeValue(forKey: name) ?? [])
        }
        renames.append((old, new))
    }

    func append(_ name: String, _ value: Int64) { rows[name, default: []].insert(value) }

    /// Forgets what was recorded (the transaction rolled back).
    func forget() {
        rows = [:]
        renames = []
    }
}

extension Connection {
    /// Defines `name(table, v1, ..., vn)` on this connection: each call adds the integers `v1...vn`
    /// (NULLs and other values are skipped) under `table` to the returned recorder, and returns
    /// NULL. Called from a trigger body as a `SELECT`, it records rows without changing anything
    /// SQL's `changes()` reports (a DML statement in a trigger body resets the count the rest of
    /// the app's statement reads); the caller writes what it recorded once the statement ran.
    ///
    /// Triggers must be able to call it: it is not direct-only, so whoever may call it is the
    /// authorizer's decision. Defining a function makes SQLite compile the connection's prepared
    /// statements again at their next use: define it once. The connection keeps the last one
    /// defined (`editRecorder`), which forgets its rows when a transaction rolls back (it installs
    /// the connection's rollback hook).
    package func defineEditRecorder(_ name: String) throws(SQLiteError) -> EditRecorder {
        guard let db = handle else { throw .connectionClosed }
        let recorder = EditRecorder()
        let rc = sqlite3_create_function_v2(db, name, -1, SQLITE_UTF8, Unmanaged.passRetained(recorder).toOpaque(), { context, count, arguments in
            let recorder = Unmanaged<EditRecorder>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
            guard count > 0, let arguments, let table = sqlite3_value_text(arguments[0]!) else {
                sqlite3_result_error(context, "an edit recorder takes the table's name first", -1)
                return
            }
            let name = String(cString: table)
            for index in 1..<Int(count) where sqlite3_value_type(arguments[index]!) == SQLITE_INTEGER {
                recorder.append(name, sqlite3_value_int64(arguments[index]!))
            }
            sqlite3_result_null(context)
        }, nil, nil, { pointer in
            if let pointer { Unmanaged<EditRecorder>.fromOpaque(pointer).release() }
        })
        guard rc == SQLITE_OK else { throw .sqlite(code: ResultCode(rawValue: rc), message: "cannot define \(name)", sql: nil) }
        // A transaction that rolls back took its rows with it: so does the recorder. (The hook
        // holds the recorder unretained: the connection keeps it.)
        sqlite3_rollback_hook(db, { context in
            Unmanaged<EditRecorder>.fromOpaque(context!).takeUnretainedValue().forget()
        }, Unmanaged.passUnretained(recorder).toOpaque())
        editRecorder = recorder
        return recorder
    }
}
