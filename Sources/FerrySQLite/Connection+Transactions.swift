extension Connection {
    /// How a transaction takes its locks (`BEGIN DEFERRED | IMMEDIATE | EXCLUSIVE`).
    public enum TransactionKind: String, Sendable {
        /// Locks on first read or write.
        case deferred = "DEFERRED"
        /// Takes the write lock at once: the choice for transactions that will write.
        case immediate = "IMMEDIATE"
        /// Takes an exclusive lock at once.
        case exclusive = "EXCLUSIVE"

        /// The statement that begins such a transaction.
        var beginSQL: String {
            switch self {
            case .deferred: "BEGIN DEFERRED TRANSACTION"
            case .immediate: "BEGIN IMMEDIATE TRANSACTION"
            case .exclusive: "BEGIN EXCLUSIVE TRANSACTION"
            }
        }
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws (and rethrows).
    ///
    /// Called inside a transaction, it runs `body` in a savepoint instead, so transactions nest.
    public func transaction<T>(_ kind: TransactionKind = .deferred, _ body: () throws -> T) throws -> T {
        if isInTransaction { return try savepoint(body) }
        try executeTransactionControl(kind.beginSQL)
        let result: T
        do {
            result = try body()
        } catch {
            rollbackQuietly("ROLLBACK")
            throw error
        }
        guard isInTransaction else {
            // SQLite rolled the transaction back after an error (I/O error, disk full, interrupt)
            // that the body caught: statements after it ran outside the transaction.
            throw SQLiteError.sqlite(code: .abortRollback,
                                    message: "the transaction was rolled back by SQLite after an error the body caught; it did not commit",
                                    sql: nil)
        }
        do {
            try executeTransactionControl("COMMIT")
        } catch {
            rollbackQuietly("ROLLBACK")
            throw error
        }
        return result
    }

    /// Runs `body` in a savepoint: releases it when `body` returns, rolls back to it and releases it
    /// when `body` throws (and rethrows). Works inside and outside transactions.
    package func savepoint<T>(_ body: () throws -> T) throws -> T {
        savepointCounter += 1
        let name = "ferry_savepoint_\(savepointCounter)"
        defer { savepointCounter -= 1 }
        try executeTransactionControl("SAVEPOINT \(name)")
        let result: T
        do {
            result = try body()
        } catch {
            rollbackQuietly("ROLLBACK TO SAVEPOINT \(name)")
            rollbackQuietly("RELEASE SAVEPOINT \(name)")
            throw error
        }
        try executeTransactionControl("RELEASE SAVEPOINT \(name)")
        return result
    }

    /// `transaction(_:_:)` for a body that throws only `E`: the transaction's own failures arrive as `E` too.
    package func transaction<T, E: SQLiteErrorConvertible>(_ kind: TransactionKind = .deferred, _ body: () throws(E) -> T) throws(E) -> T {
        try E.converting { try transaction(kind) { () throws -> T in try body() } }
    }

    /// `savepoint(_:)` for a body that throws only `E`: the savepoint's own failures arrive as `E` too.
    package func savepoint<T, E: SQLiteErrorConvertible>(_ body: () throws(E) -> T) throws(E) -> T {
        try E.converting { try savepoint { () throws -> T in try body() } }
    }

    /// Rolls back, ignoring "no transaction is active" (SQLite may already have rolled back, e.g.
    /// after SQLITE_FULL or an interrupt).
    private func rollbackQuietly(_ sql: String) {
        guard isInTransaction else { return }
        try? executeTransactionControl(sql)
    }
}
