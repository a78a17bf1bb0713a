import FerrySQLite

extension FerryError {
    /// The error as a `FerryError` (errors of other types become `.misuse` with their description).
    static func wrap(_ error: any Error) -> FerryError {
        if let error = error as? FerryError { return error }
        if error is CancellationError { return .cancelled }
        return .misuse("unexpected error: \(error)")
    }

    /// Runs `body`, converting any error to a `FerryError`.
    static func wrapping<T>(_ body: () throws -> T) throws(FerryError) -> T {
        do { return try body() } catch { throw wrap(error) }
    }
}
