import FerrySQLite

/// The app's reads and writes: every statement goes through the rewriter.
///
/// Each comes in two forms: a body that throws only `FerryError` (`{ db throws(FerryError) in ... }`)
/// gets a typed `throws(FerryError)`; any other body may throw the app's own errors, which pass
/// unchanged beside Ferry's (always `FerryError`).
extension FerryDatabase {
    /// Runs `body` with a read-only handle on a reader connection, in one snapshot.
    public func read<T>(_ body: (FerryConnection) throws -> T) throws -> T {
        try FerryError.surfacing { try pool.read { db in try body(try access.readerHandle(on: db)) } }
    }

    /// `read(_:)` for a body that throws only `FerryError`.
    public func read<T>(_ body: (FerryConnection) throws(FerryError) -> T) throws(FerryError) -> T {
        try pool.read { db throws(FerryError) in try body(try access.readerHandle(on: db)) }
    }

    /// Runs `body` in a write transaction on the writer (committed when it returns, rolled back
    /// when it throws). Migration steps never run inside it.
    public func write<T>(_ body: (FerryConnection) throws -> T) throws -> T {
        try FerryError.surfacing {
            try pool.writeWithoutTransaction { db in
                let handle = try access.writerHandle(on: db)  // temp DDL outside the app's transaction
                defer { afterAppWrite(on: db) }
                return try db.transaction(.immediate) { try body(handle) }
            }
        }
    }

    /// `write(_:)` for a body that throws only `FerryError`.
    public func write<T>(_ body: (FerryConnection) throws(FerryError) -> T) throws(FerryError) -> T {
        try pool.writeWithoutTransaction { db throws(FerryError) in
            let handle = try access.writerHandle(on: db)  // temp DDL outside the app's transaction
            defer { afterAppWrite(on: db) }
            return try db.transaction(.immediate) { () throws(FerryError) in try body(handle) }
        }
    }

    /// Async form of `read(_:)`.
    public func read<T: Sendable>(_ body: @escaping @Sendable (FerryConnection) throws -> T) async throws -> T {
        try await FerryError.surfacing {
            try await pool.read { [access] db in try body(try access.readerHandle(on: db)) }
        }
    }

    /// Async form of `read(_:)` for a body that throws only `FerryError`.
    public func read<T: Sendable>(_ body: @escaping @Sendable (FerryConnection) throws(FerryError) -> T) async throws(FerryError) -> T {
        try await pool.read { [access] db throws(FerryError) in try body(try access.readerHandle(on: db)) }
    }

    /// Async form of `write(_:)`.
    public func write<T: Sendable>(_ body: @escaping @Sendable (FerryConnection) throws -> T) async throws -> T {
        try await FerryError.surfacing {
            try await pool.writeWithoutTransaction { [self] db in
                let handle = try access.writerHandle(on: db)  // temp DDL outside the app's transaction
                defer { afterAppWrite(on: db) }
                return try db.transaction(.immediate) { try body(handle) }
            }
        }
    }

    /// Async form of `write(_:)` for a body that throws only `FerryError`.
    public func write<T: Sendable>(_ body: @escaping @Sendable (FerryConnection) throws(FerryError) -> T) async throws(FerryError) -> T {
        try await pool.writeWithoutTransaction { [self] db throws(FerryError) in
            let handle = try access.writerHandle(on: db)  // temp DDL outside the app's transaction
            defer { afterAppWrite(on: db) }
            return try db.transaction(.immediate) { () throws(FerryError) in try body(handle) }
        }
    }

    /// After the app's transaction: reload the migration state when it ended a table's migration
    /// or added a column to one (committed or rolled back: the persisted state is the truth either
    /// way), note the write for the steps (`WriterContention`), and checkpoint.
    private func afterAppWrite(on db: Connection) {
        runner.contention.noteAppWrite()  // a step that could go on moving stays short while the app writes
        if access.takeEngineStateChanged() {
            do { try engine.load(on: db) } catch { hub.send(.error(error)) }
        }
        runner.checkpointer.checkpointIfNeeded()
    }
}
