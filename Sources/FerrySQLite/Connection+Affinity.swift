#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif
import Foundation

/// A column's type affinity, as SQLite derives it from the declared type (the rules of
/// "Determination Of Column Affinity": `INT` → INTEGER; `CHAR`, `CLOB`, `TEXT` → TEXT; `BLOB` or
/// no type → BLOB; `REAL`, `FLOA`, `DOUB` → REAL; anything else → NUMERIC).
package enum ColumnAffinity: String, Sendable, Hashable {
    case integer = "INTEGER", text = "TEXT", blob = "BLOB", real = "REAL", numeric = "NUMERIC"

    /// The affinity of a column declared with `declaredType`.
    package init(declaredType: String) {
        let type = declaredType.uppercased()
        if type.contains("INT") { self = .integer }
        else if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { self = .text }
        else if type.contains("BLOB") || type.trimmingCharacters(in: .whitespaces).isEmpty { self = .blob }
        else if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") { self = .real }
        else { self = .numeric }
    }
}

/// `ferry_affinity(v, 'INTEGER'|'TEXT'|'BLOB'|'REAL'|'NUMERIC')`, which every connection has: `v`
/// as a column of that affinity stores and reads it (a text that is a number becomes the number in
/// a NUMERIC or INTEGER column, and a real without fraction an integer; a number becomes text in a
/// TEXT column; a REAL column reads integers as reals). Ferry's union applies it to the pending
/// source rows of a column whose type the target changed, so they read as the finished table's.
extension Connection {
    /// The function's name.
    package static let affinityFunction = "ferry_affinity"

    func registerAffinity() throws(SQLiteError) {
        guard let db = handle else { throw .connectionClosed }
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        let rc = sqlite3_create_function_v2(db, Self.affinityFunction, 2, flags, nil, { context, _, arguments in
            let value = arguments![0]!
            guard let code = sqlite3_value_text(arguments![1]!), let affinity = ColumnAffinity(rawValue: String(cString: code)) else {
                sqlite3_result_error(context, "ferry_affinity: unknown affinity", -1)
                return
            }
            Connection.applyAffinity(affinity, to: value, context: context!)
        }, nil, nil, nil)
        guard rc == SQLITE_OK else { throw .sqlite(code: ResultCode(rawValue: rc), message: "cannot register \(Self.affinityFunction)", sql: nil) }
    }

    /// Sets the function's result: `value` under `affinity` (SQLite's `applyAffinity`, and a REAL
    /// column's read of an integer).
    static func applyAffinity(_ affinity: ColumnAffinity, to value: OpaquePointer, context: OpaquePointer) {
        var type = sqlite3_value_type(value)
        switch affinity {
        case .blob:
            break
        case .text:
            if type == SQLITE_INTEGER || type == SQLITE_FLOAT {
                // The text SQLite stores for a number in a TEXT column (as CAST ... AS TEXT).
                let text = sqlite3_value_text(value)!
                sqlite3_result_text(context, text, sqlite3_value_bytes(value), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
                return
            }
        case .integer, .numeric, .real:
            if type == SQLITE_TEXT { type = sqlite3_value_numeric_type(value) }  // converts a well-formed number in place
            if type == SQLITE_FLOAT {
                let real = sqlite3_value_double(value)
                if let integer = losslessInteger(real) {
                    // Stored as the integer (a REAL column reads it back as a real: -0.0 reads 0.0).
                    if affinity == .real { sqlite3_result_double(context, Double(integer)) } else { sqlite3_result_int64(context, integer) }
                    return
                }
                sqlite3_result_double(context, real)
                return
            }
            if type == SQLITE_INTEGER && affinity == .real {
                sqlite3_result_double(context, Double(sqlite3_value_int64(value)))
                return
            }
        }
        sqlite3_result_value(context, value)
    }

    /// The integer a real equals exactly, strictly inside the 64-bit range (SQLite's
    /// `sqlite3VdbeIntegerAffinity`); nil otherwise.
    static func losslessInteger(_ real: Double) -> Int64? {
        guard real.isFinite, real > -9.223372036854775808e18, real < 9.223372036854775808e18 else { return nil }
        let integer = Int64(real)
        return Double(integer) == real && integer != Int64.min && integer != Int64.max ? integer : nil
    }
}
