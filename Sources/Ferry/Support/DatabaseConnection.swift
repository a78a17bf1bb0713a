import FerrySQLite

/// A handle on a database that runs SQL: what the app's connection (`FerryConnection`, from
/// `FerryDatabase.read`/`write`) and a schema migration's connection (`MigrationConnection`, in a
/// migration closure) have in common. Write code that serves both against this protocol.
///
/// Every statement runs under the same guard on both (Docs/Security.md): Ferry's own tables and
/// the migration's sources are out of reach, with `FerryError.accessDenied`.
public protocol DatabaseConnection: AnyObject {
    /// Runs one or more statements (arguments bind to a single statement).
    func execute(_ sql: String, _ arguments: StatementArguments) throws(FerryError)
    /// Runs a query and returns every row.
    func fetchAll(_ sql: String, _ arguments: StatementArguments) throws(FerryError) -> [Row]
    /// Runs a query and returns its first row, if any.
    func fetchOne(_ sql: String, _ arguments: StatementArguments) throws(FerryError) -> Row?
    /// Rows changed by the last INSERT, UPDATE or DELETE (SQLite's `changes()`).
    var changes: Int { get }
    /// The rowid of the last row inserted (SQLite's `last_insert_rowid()`).
    var lastInsertRowid: Int64 { get }
    /// True inside a transaction.
    var isInTransaction: Bool { get }
}

extension DatabaseConnection {
    /// Runs a query and returns the first column of its first row, as `T` (nil when there is no
    /// row or the value is NULL).
    public func scalar<T: SQLValueConvertible>(_ sql: String, _ arguments: StatementArguments = .none,
                                               as type: T.Type = T.self) throws(FerryError) -> T? {
        guard let row = try fetchOne(sql, arguments) else { return nil }
        return try sqlite(row.column(0, as: T?.self))
    }
}
