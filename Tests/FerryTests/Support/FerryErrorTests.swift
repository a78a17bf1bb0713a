import FerrySQLite
import Testing
@testable import Ferry

/// One answer per failure: a connection-layer failure carries the same result code whichever of
/// the two types reports it, and Ferry's own failures carry none.
@Suite struct FerryErrorTests {
    static let layerErrors: [SQLiteError] = [
        .sqlite(code: .constraintUnique, message: "UNIQUE constraint failed: t.a", sql: "INSERT INTO t VALUES (1)"),
        .sqlite(code: .busy, message: "database is locked", sql: nil),
        .wrongKeyOrNotADatabase(path: "/tmp/x.db"),
        .fileNotFound(path: "/tmp/x.db"),
        .unsupported("encryption"),
        .engineMismatch("3.40.1"),
        .invalidArguments("2 arguments for 1 parameter"),
        .connectionClosed,
        .cancelled,
        .misuse("a reentrant write"),
        .decodingFailed("column a: TEXT is not an Int"),
    ]

    @Test(arguments: layerErrors)
    func aConnectionLayerFailureHasOneResultCode(_ error: SQLiteError) {
        let ferry = FerryError(error)
        #expect(ferry.resultCode == error.resultCode)
        #expect(ferry.connectionLayerError == error)
    }

    @Test func ferrysOwnFailuresHaveNoSQLiteCodeButARefusalIsAuth() {
        #expect(FerryError.invalidPlan("x").resultCode == nil)
        #expect(FerryError.sourceUnavailable(path: "/x", reason: "gone").resultCode == nil)
        #expect(FerryError.cleanupRefused(table: "t", reason: "r").resultCode == nil)
        #expect(FerryError.accessDenied(object: "ferry_migration_tables", statement: "DELETE", reason: "is Ferry's").resultCode == .auth)
    }
}
