import FerrySQLite

/// Nested transactions inside `write { }`.
extension FerryConnection {
    /// Runs `body` in a savepoint: its changes are kept when it returns and undone when it throws
    /// (the error is rethrown). Savepoints nest. Everything Ferry did for the body's statements
    /// (rows moved ahead of its writes, a migration its `DROP TABLE` ended, the app's edits it
    /// recorded) is undone with them, and the rest of the transaction sees the tables as before.
    /// - Throws: `FerryError.misuse` in `read { }` (a reader's savepoint would hold its snapshot
    ///   only), the body's error, or the savepoint's own.
    public func inSavepoint<T>(_ body: () throws -> T) throws -> T {
        guard isWriter else { throw FerryError.misuse("inSavepoint runs in write { }, not read { }") }
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "ferry_app_savepoint_\(savepointDepth)"
        let state = (redirector: redirector, ended: endedTables)
        try execute("SAVEPOINT \(name)")
        let result: T
        do {
            result = try body()
        } catch {
            if connection.isInTransaction {
                try? execute("ROLLBACK TO \(name)")
                try? execute("RELEASE \(name)")
                // The schema and Ferry's state are the savepoint's again: so is the redirection.
                restore(redirector: state.redirector, endedTables: state.ended)
            }
            throw error
        }
        try execute("RELEASE \(name)")
        return result
    }
}
