extension Connection {
    /// `transaction(_:_:)` for bodies that throw only `FerryError`.
    func inTransaction<T>(_ kind: TransactionKind, _ body: () throws(FerryError) -> T) throws(FerryError) -> T {
        try FerryError.wrapping { try transaction(kind) { try body() } }
    }

    /// `savepoint(_:)` for bodies that throw only `FerryError`.
    func inSavepoint<T>(_ body: () throws(FerryError) -> T) throws(FerryError) -> T {
        try FerryError.wrapping { try savepoint { try body() } }
    }
}
