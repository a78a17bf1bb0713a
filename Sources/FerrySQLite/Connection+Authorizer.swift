#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

/// What a statement being compiled wants to do, as SQLite's authorizer reports it
/// (`sqlite3_set_authorizer`): one request per table written, object created or dropped, pragma,
/// function, `ATTACH`, ... SQLite asks while it compiles (and re-compiles) a statement, never while
/// it runs, so an answer holds for every run of that compiled statement.
package struct AuthorizerRequest: Sendable, Hashable, CustomStringConvertible {
    /// The kind of action (SQLite's action code).
    package var action: AuthorizerAction
    /// SQLite's first detail: a table, index, trigger or view name, a pragma name, a file name for
    /// `ATTACH`, a schema for `DETACH`, a savepoint operation (see SQLite's action-code table).
    package var first: String?
    /// SQLite's second detail: the table of an index or trigger, a pragma's argument, a function's
    /// name, a savepoint's name.
    package var second: String?
    /// The schema the object lives in (`main`, `temp`, or an attached name), when there is one.
    package var schema: String?
    /// The innermost trigger or view responsible for the access, or nil for the statement itself.
    package var accessor: String?

    /// Makes a request (tests, and policies that build their own).
    package init(action: AuthorizerAction, first: String? = nil, second: String? = nil, schema: String? = nil, accessor: String? = nil) {
        self.action = action
        self.first = first
        self.second = second
        self.schema = schema
        self.accessor = accessor
    }

    /// `action(first, second) in schema via accessor`, for logs and errors.
    package var description: String {
        var text = "\(action)(" + [first, second].map { $0 ?? "nil" }.joined(separator: ", ") + ")"
        if let schema { text += " in \(schema)" }
        if let accessor { text += " via \(accessor)" }
        return text
    }
}

/// SQLite's authorizer action codes (`SQLITE_CREATE_INDEX` ... `SQLITE_RECURSIVE`).
package struct AuthorizerAction: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// SQLite's integer code.
    package let rawValue: Int32
    /// Wraps SQLite's integer code.
    package init(rawValue: Int32) { self.rawValue = rawValue }

    package static let createIndex = AuthorizerAction(rawValue: 1)
    package static let createTable = AuthorizerAction(rawValue: 2)
    package static let createTempIndex = AuthorizerAction(rawValue: 3)
    package static let createTempTable = AuthorizerAction(rawValue: 4)
    package static let createTempTrigger = AuthorizerAction(rawValue: 5)
    package static let createTempView = AuthorizerAction(rawValue: 6)
    package static let createTrigger = AuthorizerAction(rawValue: 7)
    package static let createView = AuthorizerAction(rawValue: 8)
    package static let delete = AuthorizerAction(rawValue: 9)
    package static let dropIndex = AuthorizerAction(rawValue: 10)
    package static let dropTable = AuthorizerAction(rawValue: 11)
    package static let dropTempIndex = AuthorizerAction(rawValue: 12)
    package static let dropTempTable = AuthorizerAction(rawValue: 13)
    package static let dropTempTrigger = AuthorizerAction(rawValue: 14)
    package static let dropTempView = AuthorizerAction(rawValue: 15)
    package static let dropTrigger = AuthorizerAction(rawValue: 16)
    package static let dropView = AuthorizerAction(rawValue: 17)
    package static let insert = AuthorizerAction(rawValue: 18)
    package static let pragma = AuthorizerAction(rawValue: 19)
    package static let read = AuthorizerAction(rawValue: 20)
    package static let select = AuthorizerAction(rawValue: 21)
    package static let transaction = AuthorizerAction(rawValue: 22)
    package static let update = AuthorizerAction(rawValue: 23)
    package static let attach = AuthorizerAction(rawValue: 24)
    package static let detach = AuthorizerAction(rawValue: 25)
    package static let alterTable = AuthorizerAction(rawValue: 26)
    package static let reindex = AuthorizerAction(rawValue: 27)
    package static let analyze = AuthorizerAction(rawValue: 28)
    package static let createVirtualTable = AuthorizerAction(rawValue: 29)
    package static let dropVirtualTable = AuthorizerAction(rawValue: 30)
    package static let function = AuthorizerAction(rawValue: 31)
    package static let savepoint = AuthorizerAction(rawValue: 32)
    package static let recursive = AuthorizerAction(rawValue: 33)

    private static let names = [
        "", "CREATE INDEX", "CREATE TABLE", "CREATE TEMP INDEX", "CREATE TEMP TABLE", "CREATE TEMP TRIGGER",
        "CREATE TEMP VIEW", "CREATE TRIGGER", "CREATE VIEW", "DELETE", "DROP INDEX", "DROP TABLE", "DROP TEMP INDEX",
        "DROP TEMP TABLE", "DROP TEMP TRIGGER", "DROP TEMP VIEW", "DROP TRIGGER", "DROP VIEW", "INSERT", "PRAGMA",
        "READ", "SELECT", "TRANSACTION", "UPDATE", "ATTACH", "DETACH", "ALTER TABLE", "REINDEX", "ANALYZE",
        "CREATE VIRTUAL TABLE", "DROP VIRTUAL TABLE", "FUNCTION", "SAVEPOINT", "RECURSIVE",
    ]

    /// SQLite's name for the action (`INSERT`, `DROP TABLE`, ...).
    package var description: String {
        Self.names.indices.contains(Int(rawValue)) ? Self.names[Int(rawValue)] : "action \(rawValue)"
    }

    /// True for the actions that create, drop or alter a schema object.
    package var isSchemaChange: Bool {
        (1...8).contains(rawValue) || (10...17).contains(rawValue) || self == .alterTable || self == .createVirtualTable
            || self == .dropVirtualTable
    }
}

/// An authorizer's answer.
package enum AuthorizerDecision: Sendable, Hashable {
    /// The action may go on.
    case allow
    /// The statement fails to compile (`SQLITE_AUTH`, "not authorized"); `reason` is kept in
    /// `Connection.lastAuthorizerDenial` for an error that says why.
    case deny(reason: String)
    /// For a function (`AuthorizerAction.function`): the statement compiles with NULL in place of
    /// the call, which never runs (SQLite's `SQLITE_IGNORE`). Any other action is denied.
    case ignore
}

/// Whose statements a connection is compiling: the library's own (trusted), or statements that
/// came from outside (untrusted). An authorizer decides with it; the statement cache keeps the two
/// apart, so a statement compiled as trusted is never handed to untrusted code.
package enum StatementTrust: Sendable, Hashable {
    /// The library's own statements.
    case trusted
    /// Statements written by someone else (the app, an operator at a shell).
    case untrusted
}

/// A denial the authorizer gave while compiling a statement.
package struct AuthorizerDenial: Sendable, Hashable {
    /// What the statement asked for.
    package var request: AuthorizerRequest
    /// Why it was refused.
    package var reason: String
}

/// The authorizer closure and its state, kept alive by the connection while SQLite may call it.
final class AuthorizerBox {
    let body: (AuthorizerRequest, StatementTrust) -> AuthorizerDecision
    var trust = StatementTrust.trusted
    /// The latest denial (cleared before each `Connection.prepare`; a re-compile while a statement
    /// runs records its own).
    var lastDenial: AuthorizerDenial?
    /// Bit `n` set when action code `n` was requested since the last reset (see `Statement.actions`).
    var actions: UInt64 = 0
    init(_ body: @escaping (AuthorizerRequest, StatementTrust) -> AuthorizerDecision) { self.body = body }
}

extension Connection {
    /// Installs `body` as this connection's authorizer (nil removes it). SQLite calls it while it
    /// compiles each statement, with the connection's current `statementTrust`; a `.deny` makes
    /// the statement fail with `SQLITE_AUTH` and nothing of it runs.
    ///
    /// Column reads (`READ`), `SELECT` and recursive CTEs are always allowed without calling
    /// `body`: they are the bulk of the requests and change nothing. Installing an authorizer makes
    /// SQLite re-compile every prepared statement of the connection at its next use.
    package func setAuthorizer(_ body: ((AuthorizerRequest, StatementTrust) -> AuthorizerDecision)?) {
        guard let handle else { return }
        guard let body else {
            sqlite3_set_authorizer(handle, nil, nil)
            authorizer = nil
            return
        }
        let box = AuthorizerBox(body)
        box.trust = authorizer?.trust ?? .trusted
        authorizer = box
        sqlite3_set_authorizer(handle, { context, action, first, second, schema, accessor in
            let box = Unmanaged<AuthorizerBox>.fromOpaque(context!).takeUnretainedValue()
            if action >= 0 && action < 64 { box.actions |= 1 << UInt64(action) }
            if action == SQLITE_READ || action == SQLITE_SELECT || action == SQLITE_RECURSIVE { return SQLITE_OK }
            let request = AuthorizerRequest(action: AuthorizerAction(rawValue: action), first: first.map { String(cString: $0) },
                                            second: second.map { String(cString: $0) }, schema: schema.map { String(cString: $0) },
                                            accessor: accessor.map { String(cString: $0) })
            switch box.body(request, box.trust) {
            case .allow:
                return SQLITE_OK
            case .ignore where action == SQLITE_FUNCTION:
                return SQLITE_IGNORE
            case .ignore:
                box.lastDenial = AuthorizerDenial(request: request, reason: "an authorizer may ignore function calls only")
                return SQLITE_DENY
            case .deny(let reason):
                box.lastDenial = AuthorizerDenial(request: request, reason: reason)
                return SQLITE_DENY
            }
        }, Unmanaged.passUnretained(box).toOpaque())
    }

    /// True when an authorizer is installed.
    package var hasAuthorizer: Bool { authorizer != nil }

    /// Whose statements the connection compiles now (`.trusted` unless inside `withStatementTrust`).
    package var statementTrust: StatementTrust { authorizer?.trust ?? .trusted }

    /// Runs `body` with statements compiled (and re-compiled) under `trust`, then restores the
    /// previous trust. Cached statements are kept per trust.
    package func withStatementTrust<T, E: Error>(_ trust: StatementTrust, _ body: () throws(E) -> T) throws(E) -> T {
        guard let authorizer else { return try body() }
        let previous = authorizer.trust
        authorizer.trust = trust
        defer { authorizer.trust = previous }
        return try body()
    }

    /// The authorizer's latest denial: read it when a statement failed with `SQLITE_AUTH` (at
    /// prepare, or when SQLite re-compiled it to run it after a schema change).
    package var lastAuthorizerDenial: AuthorizerDenial? { authorizer?.lastDenial }

    /// Forgets the latest denial (before running statements whose failure should be explained by
    /// their own denials only).
    package func clearAuthorizerDenial() { authorizer?.lastDenial = nil }

    /// Records `denial` again as the latest (after statements that must not explain a failure).
    func restoreAuthorizerDenial(_ denial: AuthorizerDenial) { authorizer?.lastDenial = denial }

    /// Clears the recorded denial and action set before a compile.
    func resetAuthorizerRecord() {
        authorizer?.lastDenial = nil
        authorizer?.actions = 0
    }

    /// The action codes requested since the last reset, as a bit set.
    var authorizerActions: UInt64 { authorizer?.actions ?? 0 }
}
