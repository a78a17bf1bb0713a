import FerrySQLite

/// Cursors: a query's rows one at a time (`FerryCursor`), through the same rewrite as `fetchAll`.
extension FerryConnection {
    /// Runs a query and returns a cursor over its rows, which it reads as `next()` asks for them.
    /// Use the cursor inside this `read { }` or `write { }` only (see `FerryCursor`).
    /// - Throws: SQLite's errors for the query; `FerryError.misuse` for a statement that writes or
    ///   returns no rows (run it with `execute` or `fetchAll`).
    public func fetchCursor(_ sql: String, _ arguments: StatementArguments = .none) throws(FerryError) -> FerryCursor<Row> {
        try cursor(sql, arguments) { row throws(FerryError) in row }
    }

    /// Runs a query and returns a cursor that decodes each row into `Record` as `next()` asks for
    /// it (its coding keys name the columns, as `keys` says). Use the cursor inside this
    /// `read { }` or `write { }` only (see `FerryCursor`).
    /// - Parameters:
    ///   - type: the record type.
    ///   - sql: the query.
    ///   - arguments: the query's arguments.
    ///   - keys: how the record's coding keys name the columns.
    /// - Throws: SQLite's errors for the query; `FerryError.misuse` for a statement that writes or
    ///   returns no rows. `next()` throws `FerryError.decodingFailed` naming the column of a value
    ///   that does not fit.
    public func fetchCursor<Record: Decodable>(_ type: Record.Type, _ sql: String, _ arguments: StatementArguments = .none,
                                               keys: ColumnKeys = .asWritten) throws(FerryError) -> FerryCursor<Record> {
        try cursor(sql, arguments) { row throws(FerryError) in try sqlite(row.decoded(Record.self, keys: keys)) }
    }

    /// Prepares the redirected query as a statement of the cursor's own (not the statement cache,
    /// whose statements other calls reset) and registers the cursor, which the handle ends.
    private func cursor<Element>(_ sql: String, _ arguments: StatementArguments,
                                 _ element: @escaping (Row) throws(FerryError) -> Element) throws(FerryError) -> FerryCursor<Element> {
        let statement = try asApp(sql) { () throws(FerryError) -> FerrySQLite.Statement in
            let (statement, _) = try prepareRedirected(sql, arguments: arguments, owned: true)
            guard statement.isReadOnly, statement.columnCount > 0, !statement.requested(.attach), !statement.requested(.detach) else {
                throw Self.cursorRefusal(sql)
            }
            return statement
        }
        let cursor = FerryCursor(handle: self, sql: sql, statement: statement, element: element)
        register(cursor)
        return cursor
    }

    /// The error of a cursor asked for a statement that is not a query.
    static func cursorRefusal(_ sql: String) -> FerryError {
        .misuse("fetchCursor runs queries that return rows and write nothing; run `\(SecretRedaction.redactingKeyLiterals(sql))` with execute or fetchAll")
    }
}
