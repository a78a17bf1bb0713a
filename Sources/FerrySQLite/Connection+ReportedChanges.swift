#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// SQL's `changes()` as the connection's user last left it, across statements run on the user's
/// behalf (a lock taken, rows moved ahead of a write, a migration step), which are DML and would
/// otherwise reset the count SQLite reports.
///
/// Every connection overrides the built-in `changes()` with a function that returns the reported
/// value while one is set and no row changed since (`sqlite3_total_changes64` unchanged: a trigger
/// body that changed rows sees SQLite's own count, as always), and SQLite's count otherwise.
extension Connection {
    /// What SQL's `changes()` returns right now.
    package var visibleChanges: Int {
        guard let handle else { return 0 }
        if let value = reportedChanges.value, sqlite3_total_changes64(handle) == reportedChanges.totalChanges { return Int(value) }
        return Int(sqlite3_changes64(handle))
    }

    /// Makes SQL's `changes()` return `value` until a statement changes a row or
    /// `endReportedChanges()` is called: call it after running statements the user did not write,
    /// with the `visibleChanges` read before them.
    package func reportChanges(_ value: Int) {
        guard let handle else { return }
        reportedChanges.value = Int64(value)
        reportedChanges.totalChanges = sqlite3_total_changes64(handle)
    }

    /// Runs `body`, statements the user did not write (a migration step, rows moved ahead of a
    /// write, bookkeeping), so that SQL's `changes()` and `last_insert_rowid()` stay as the user's
    /// statements left them.
    package func invisibly<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let lastRowid = lastInsertRowid
        let visible = visibleChanges
        defer {
            reportChanges(visible)
            setLastInsertRowid(lastRowid)
        }
        return try body()
    }

    /// SQL's `changes()` is SQLite's count again: call it after each of the user's INSERT, UPDATE
    /// and DELETE statements (which set that count, also when they change no row or fail).
    package func endReportedChanges() { reportedChanges.value = nil }

    func registerChangesFunction() throws(SQLiteError) {
        guard let db = handle else { throw .connectionClosed }
        let box = Unmanaged.passUnretained(reportedChanges).toOpaque()
        // Innocuous, as the built-in: views and triggers may call it under `trusted_schema = OFF`.
        let rc = sqlite3_create_function_v2(db, "changes", 0, SQLITE_UTF8 | SQLITE_INNOCUOUS, box, { context, _, _ in
            let report = Unmanaged<ReportedChanges>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
            let db = sqlite3_context_db_handle(context)
            if let value = report.value, sqlite3_total_changes64(db) == report.totalChanges {
                sqlite3_result_int64(context, value)
            } else {
                sqlite3_result_int64(context, sqlite3_changes64(db))
            }
        }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw .sqlite(code: ResultCode(rawValue: rc), message: "cannot register changes()", sql: nil) }
    }
}

/// The count SQL's `changes()` reports while set (see `Connection.reportChanges(_:)`), and the
/// connection's total of changed rows when it was set. Used on the connection's thread only.
final class ReportedChanges {
    var value: Int64?
    var totalChanges: Int64 = 0
}
