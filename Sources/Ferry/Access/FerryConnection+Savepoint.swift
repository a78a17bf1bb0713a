import FerrySQLite

/// Nested transactions inside `write { }`.
extension FerryConnection {
    /// Runs `body` in a savepoint: its changes are kept when it returns and undone when it throws
    /// (the error is rethrown). Savepoints nest. Everything Ferry did for the body's statements
    /// (rows moved ahead of its writes, a migration its `DROP TABLE` ended, the app's edits it
    /// recorded) is undone with them, and the rest of the transaction sees the tables as before.
    /// - Throws: `FerryError.misuse` in `read { }` (a reader's savepoint would hold its snapshot
    ///   only), the body's error, or the savepoint's own.
    @_disfavoredOverload
    public func inSavepoint<T>(_ body: () throws -> T) throws -> T {
        try savepoint(body, error: { $0 })
    }

    /// `inSavepoint(_:)` for a body that throws only `FerryError` (`{ () throws(FerryError) in ... }`,
    /// or a body that throws nothing).
    public func inSavepoint<T>(_ body: () throws(FerryError) -> T) throws(FerryError) -> T {
        try savepoint(body, error: { $0 })
    }

    /// Both forms: `error` turns Ferry's own failures into the body's error type.
    private func savepoint<T, E: Error>(_ body: () throws(E) -> T, error: (FerryError) -> E) throws(E) -> T {
        guard isWriter else { throw error(.misuse("inSavepoint runs in write { }, not read { }")) }
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "ferry_app_savepoint_\(savepointDepth)"
        let state = (redirector: redirector, ended: endedTables)
        do throws(FerryError) { try execute("SAVEPOINT \(name)") } catch let failure { throw error(failure) }
        let result: T
        do throws(E) {
            result = try body()
        } catch let failure {
            if connection.isInTransaction {
                try? execute("ROLLBACK TO \(name)")
                try? execute("RELEASE \(name)")
                // The schema and Ferry's state are the savepoint's again: so is the redirection.
                restore(redirector: state.redirector, endedTables: state.ended)
            }
            throw failure
        }
        do throws(FerryError) { try execute("RELEASE \(name)") } catch let failure { throw error(failure) }
        return result
    }
}
