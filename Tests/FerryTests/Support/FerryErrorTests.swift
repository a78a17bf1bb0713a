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

    /// Ferry's API throws one type: a row's values and the ciphers' checked constructors throw
    /// `FerryError` (the `do throws(FerryError)` blocks do not compile otherwise), with the result
    /// code of the connection layer's failure.
    @Test func aRowsValuesAndTheCipherConstructorsThrowFerryError() throws {
        let row = try #require(try Connection.inMemory().fetchOne("SELECT 1 AS a"))
        do throws(FerryError) {
            let _: String = try row.get("missing")
            Issue.record("a missing column was read")
        } catch {
            #expect(error.resultCode == .mismatch)
        }
        do throws(FerryError) {
            _ = try row.decode([String: Int].self)
            _ = try Cipher.rawKey([1, 2, 3])
            Issue.record("a 3-byte raw key was accepted")
        } catch {
            #expect(error.resultCode == .range)
        }
        do throws(FerryError) {
            try CipherSettings(kdfIterations: 0).validate()
            Issue.record("zero KDF iterations were accepted")
        } catch {
            #expect(error.resultCode == .range)
        }
    }
}
