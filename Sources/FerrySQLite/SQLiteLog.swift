#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif
import Logging

/// Routes SQLite's own diagnostics (its global error log and, when enabled, statement traces)
/// to swift-log. Nothing is ever written to the app's stdout or stderr.
enum SQLiteLog {
    /// The logger for SQLite's error log and statement tracing (label `ferry.sqlite`).
    static let logger = Logger(label: "ferry.sqlite")

    /// Installs SQLite's global error log callback. Must run before SQLite initializes; when another
    /// library initialized SQLite first, SQLite refuses and its default (silent) log stays.
    static func install() {
        _ = ferry_sqlite3_config_log({ _, code, message in
            guard let message else { return }
            // SQLite's messages quote the statement they concern: a key in it must not reach a log.
            let text = SecretRedaction.redactingKeyLiterals(String(cString: message))
            // Most errors also reach the caller as a thrown SQLiteError: log them at debug level.
            // Storage trouble (corruption, I/O, disk full) deserves a warning even when handled.
            switch code & 0xFF {
            case SQLITE_CORRUPT, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOMEM:
                SQLiteLog.logger.warning("\(text)", metadata: ["code": "\(code)"])
            default:
                SQLiteLog.logger.debug("\(text)", metadata: ["code": "\(code)"])
            }
        }, nil)
    }

    /// Starts tracing the statements of a connection at `trace` level.
    static func traceStatements(of db: OpaquePointer) {
        sqlite3_trace_v2(db, UInt32(SQLITE_TRACE_STMT), { _, _, statement, _ in
            if let statement { SQLiteLog.logger.trace("\(SQLiteLog.traceText(of: OpaquePointer(statement)))") }
            return 0
        }, nil)
    }

    /// The text a statement is traced with: its SQL with the bound values expanded, except for
    /// `ATTACH ... KEY ?`, whose bound key must never reach a log: that one keeps its placeholders.
    static func traceText(of statement: OpaquePointer) -> String {
        let template = sqlite3_sql(statement).map { String(cString: $0) } ?? ""
        if template.drop(while: \.isWhitespace).prefix(6).uppercased() == "ATTACH" { return SecretRedaction.redactingKeyLiterals(template) }
        guard let expanded = sqlite3_expanded_sql(statement) else { return SecretRedaction.redactingKeyLiterals(template) }
        defer { sqlite3_free(expanded) }
        return SecretRedaction.redactingKeyLiterals(String(cString: expanded))
    }
}
