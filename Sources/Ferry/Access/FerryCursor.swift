import FerrySQLite

/// The rows of a query one at a time, read as they are needed instead of all at once
/// (`FerryConnection.fetchCursor`): memory stays flat however many rows the query returns.
///
/// ```swift
/// try db.read { db throws(FerryError) in
///     let messages = try db.fetchCursor(Message.self, "SELECT * FROM messages ORDER BY id")
///     while let message = try messages.next() { print(message.body) }
/// }
/// ```
///
/// A cursor reads through Ferry's rewrite like `fetchAll`: a migrating table returns its moved
/// rows and the source rows not moved yet, as the finished table would.
///
/// A cursor is valid inside the `read { }` or `write { }` whose handle created it, and only
/// there: when the closure returns, the cursor lets its statement go, and a cursor used after
/// that throws `FerryError.misuse`. Statements the same `write { }` runs while a cursor is not
/// finished may or may not be seen by it, as SQLite says of any statement that reads a table
/// another statement of its connection changes: finish the iteration before writing what it read
/// (or collect the changes and write them after).
public final class FerryCursor<Element> {
    private let handle: FerryConnection
    private let sql: String
    /// The statement being stepped; nil once the rows are exhausted or the handle ended.
    private var statement: FerrySQLite.Statement?
    private let element: (Row) throws(FerryError) -> Element

    init(handle: FerryConnection, sql: String, statement: FerrySQLite.Statement, element: @escaping (Row) throws(FerryError) -> Element) {
        self.handle = handle
        self.sql = sql
        self.statement = statement
        self.element = element
    }

    /// The next row (decoded), or nil when there are no more.
    /// - Throws: `FerryError.misuse` after the `read { }` or `write { }` that created the cursor
    ///   ended; SQLite's errors (the cursor then returns nil); a record's decoding error (the
    ///   cursor goes on with the next row).
    public func next() throws(FerryError) -> Element? {
        try handle.requireOpen()
        guard let statement else { return nil }
        let row: Row?
        do {
            // As the app's statement: a statement SQLite compiles again (the schema changed) is
            // authorized as the app's.
            row = try handle.asApp(sql) { () throws(FerryError) in try sqlite(statement.step()) ? statement.currentRow() : nil }
        } catch {
            release()
            throw error
        }
        guard let row else {
            release()
            return nil
        }
        return try element(row)
    }

    /// Calls `body` with each remaining row, in order.
    /// - Throws: what `next()` throws, and `body`'s error (which stops the iteration).
    public func forEach(_ body: (Element) throws(FerryError) -> Void) throws(FerryError) {
        while let value = try next() { try body(value) }
    }

    /// Calls `body`, which may throw the app's own errors, with each remaining row, in order.
    /// - Throws: what `next()` throws, and `body`'s error (which stops the iteration).
    @_disfavoredOverload
    public func forEach(_ body: (Element) throws -> Void) throws {
        while let value = try next() { try body(value) }
    }
}

extension FerryCursor: CursorReleasing {
    /// Lets the statement go (reset, then finalized): on the handle's connection, while the
    /// handle's closure still runs.
    func release() {
        statement?.reset()
        statement = nil
    }
}

/// A cursor its handle ends with it (`FerryConnection.end()`).
protocol CursorReleasing: AnyObject {
    /// Lets the cursor's statement go.
    func release()
}

/// A handle's reference to one of its cursors, which it does not keep alive.
struct WeakCursor {
    weak var cursor: (any CursorReleasing)?
}
