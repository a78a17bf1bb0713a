#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif
import Foundation

/// `ferry_time_value(v)`, which every connection has: returns `v` unchanged, and fails when `v` is a
/// text that makes a date or time function read the clock (`'now'`) or the time zone
/// (`'localtime'`, `'utc'`), in any case. Migration filters and column feeds call it around the
/// computed arguments of date and time functions (FerrySQL's `TimeValueGuard`): the rule SQLite
/// applies to CHECK constraints and indexes, applied where SQLite does not.
extension Connection {
    /// The guard function's name.
    package static let timeValueGuardFunction = "ferry_time_value"

    /// The start of the guard's error message. Its failures carry the result code
    /// `ResultCode.constraintFunction`, by which callers recognize them.
    package static let timeValueGuardMessage = "a value that reads the clock or the time zone"

    /// True when `text` makes a date or time function read the clock or the time zone.
    static func readsClockOrTimeZone(_ text: String) -> Bool {
        let word = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        return word == "now" || word == "localtime" || word == "utc"
    }

    func registerTimeValueGuard() throws(SQLiteError) {
        guard let db = handle else { throw .connectionClosed }
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        let rc = sqlite3_create_function_v2(db, Self.timeValueGuardFunction, 1, flags, nil, { context, _, arguments in
            let argument = arguments![0]!
            if sqlite3_value_type(argument) == SQLITE_TEXT, case .text(let text) = Value(sqliteValue: argument),
               Connection.readsClockOrTimeZone(text) {
                let message = "\(Connection.timeValueGuardMessage) ('\(text)') in a migration filter or column feed: "
                    + "its value changes between steps, so SQLite refuses it in CHECK constraints and indexes, and Ferry here"
                sqlite3_result_error(context, message, -1)
                sqlite3_result_error_code(context, ResultCode.constraintFunction.rawValue)
                return
            }
            sqlite3_result_value(context, argument)
        }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw .sqlite(code: ResultCode(rawValue: rc), message: "cannot register \(Self.timeValueGuardFunction)", sql: nil) }
    }
}
