import FerrySQLite

/// What the authorizer refused, as the typed error the caller sees (`FerryError.accessDenied`):
/// shared by the app's connections and the schema migrator's bodies, which both run untrusted.
enum AccessDenial {
    /// True for SQLite's schema table under any of its names.
    static func isSchemaTable(_ name: String) -> Bool {
        ["sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"].contains(name.lowercased())
    }

    /// The typed error for a statement the authorizer refused, from the connection's last denial;
    /// nil when `error` is not the authorizer's.
    /// (SQLite reports most denials as `SQLITE_AUTH`, a denied function as a plain error: the
    /// recorded denial decides; callers clear it before running the statement.)
    static func error(for error: FerryError, sql: String, on db: Connection) -> FerryError? {
        guard let denial = db.lastAuthorizerDenial else { return nil }
        guard case .sqlite = error else { return nil }
        return .accessDenied(object: objectName(denial.request), statement: SecretRedaction.redactingKeyLiterals(sql), reason: denial.reason)
    }

    /// How an error names the object of a request.
    static func objectName(_ request: AuthorizerRequest) -> String {
        let qualified = { (name: String?) -> String in
            guard let name else { return "?" }
            return request.schema.map { "\($0).\(name)" } ?? name
        }
        switch request.action {
        case .insert, .update, .delete:
            if let table = request.first, isSchemaTable(table) { return "the schema of \(request.schema ?? "main")" }
            return "\(request.action) on \(qualified(request.first))"
        case .pragma: return "PRAGMA " + (request.schema.map { "\($0)." } ?? "") + (request.first ?? "")
        case .function: return "\(request.second ?? "?")()"
        case .attach: return "ATTACH of " + (request.first.map { "'\($0)'" } ?? "a computed file name")
        case .detach: return "DETACH of \(request.first ?? "?")"
        case .transaction: return "\(request.first ?? "TRANSACTION")"
        case .alterTable: return "ALTER TABLE \(request.first ?? "main").\(request.second ?? "?")"
        default: return "\(request.action) \(qualified(request.first))" + (request.second.map { " on \($0)" } ?? "")
        }
    }
}
