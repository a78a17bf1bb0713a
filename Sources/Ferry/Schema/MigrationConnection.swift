import FerrySQLite

/// The connection a schema migration runs on, and the one to open for schema migrations alone
/// (an app without data migrations, a test of its migrations).
///
/// In a migration closure it is the writer, inside the migration's transaction; its statements
/// run under the same guard as the app's (`FerryDatabase`'s policy, Docs/Security.md). Opened by
/// itself, it is a plain connection to the file:
///
/// ```swift
/// let db = try MigrationConnection(path: "app.sqlite")
/// try migrator.migrate(db)
/// ```
/// With data migrations, migrate through `FerryDatabase.migrateSchema(_:upTo:)` instead.
public final class MigrationConnection: DatabaseConnection, @unchecked Sendable {
    /// The connection underneath (used on one thread at a time, like any connection).
    package let connection: Connection

    /// Wraps a connection of this package's (the migrator's writer, a test's database).
    package init(_ connection: Connection) { self.connection = connection }

    /// Opens (or creates) the database at `path`.
    /// - Throws: `FerryError.wrongKeyOrNotADatabase`, `FerryError.fileNotFound` and SQLite's errors.
    public convenience init(path: String, configuration: DatabaseConfiguration = .init()) throws(FerryError) {
        self.init(try sqlite(Connection(path: path, configuration: configuration)))
    }

    /// A private in-memory database (scratch databases for tests).
    public static func inMemory(configuration: DatabaseConfiguration = .init()) throws(FerryError) -> MigrationConnection {
        MigrationConnection(try sqlite(Connection.inMemory(configuration: configuration)))
    }

    /// Closes the connection (also done when it is released).
    public func close() { connection.close() }

    /// The configuration it was opened with.
    public var configuration: DatabaseConfiguration { connection.configuration }

    /// Runs one or more statements (arguments bind to a single statement).
    public func execute(_ sql: String, _ arguments: StatementArguments = .none) throws(FerryError) {
        try sqlite(connection.execute(sql, arguments))
    }

    /// Runs a query and returns every row.
    public func fetchAll(_ sql: String, _ arguments: StatementArguments = .none) throws(FerryError) -> [Row] {
        try sqlite(connection.fetchAll(sql, arguments))
    }

    /// Runs a query and returns its first row, if any.
    public func fetchOne(_ sql: String, _ arguments: StatementArguments = .none) throws(FerryError) -> Row? {
        try sqlite(connection.fetchOne(sql, arguments))
    }

    /// Runs `body` in a transaction (a savepoint when one is open): committed when it returns,
    /// rolled back when it throws.
    public func transaction<T>(_ body: () throws(FerryError) -> T) throws(FerryError) -> T {
        try connection.transaction(.immediate) { () throws(FerryError) in try body() }
    }

    /// Deletes every table, index, view and trigger of `main` (and SQLite's statistics and
    /// AUTOINCREMENT counters), and resets `user_version`: the database becomes empty. Works on
    /// plain and encrypted databases alike.
    /// - Throws: `FerryError.misuse` inside a transaction.
    public func eraseDatabase() throws {
        try connection.eraseDatabase()
    }

    /// Changes the key of this encrypted database in place (SQLCipher's `PRAGMA rekey`).
    /// - Throws: `FerryError.unsupported` without SQLCipher (the `SystemSQLite` trait).
    public func rekey(to key: CipherKey) throws(FerryError) {
        try sqlite(connection.rekey(to: key))
    }

    /// Writes a copy of this database to `path` encrypted with `cipher` (nil: plain text), e.g. to
    /// move from SQLCipher 3 settings to 4.
    /// - Throws: `FerryError.unsupported` without SQLCipher (the `SystemSQLite` trait).
    public func export(to path: String, cipher: Cipher?) throws(FerryError) {
        try sqlite(connection.export(to: path, cipher: cipher))
    }

    /// Checks every foreign key of `main` (or of `table` alone) and throws the first violation as
    /// `FerryError.foreignKeyViolation` (table, columns, parent, row).
    public func checkForeignKeys(in table: String? = nil) throws(FerryError) {
        try connection.checkForeignKeys(in: table)
    }

    /// Every row of `main` (or of `table` alone) whose foreign key has no parent row.
    public func foreignKeyViolations(in table: String? = nil) throws(FerryError) -> [ForeignKeyViolation] {
        try ForeignKeyCheck.violations(connection, in: table)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { connection.changes }
    /// The rowid of the last row inserted.
    public var lastInsertRowid: Int64 { connection.lastInsertRowid }
    /// True inside a transaction.
    public var isInTransaction: Bool { connection.isInTransaction }
}
