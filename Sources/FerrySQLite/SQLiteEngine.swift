// The one SQLite engine of this build, and the check that the loaded library is the one we compiled for.

// Enable one of the traits SQLCipher (default) or SystemSQLite. With both (SwiftPM enables every
// trait to extract documentation symbols), SQLCipher's code is compiled; a binary that links both
// libraries (they export the same symbols) is refused at its first open by `checkLoadedLibrary`
// (`SQLiteError.engineMismatch`) when the library it loaded is not SQLCipher.
#if SQLCipher
internal import CSQLCipher
#elseif SystemSQLite
internal import CSQLite
#else
#error("Enable exactly one of the traits SQLCipher (default) or SystemSQLite.")
#endif

import Synchronization

/// Facts about the SQLite engine linked into this build.
///
/// Ferry links exactly one engine per build, chosen by a package trait: SQLCipher 4.6.1 (default,
/// plain and encrypted databases) or the system's libsqlite3 (plain databases only).
public enum SQLiteEngine {
    /// Which library this build links.
    public enum Kind: String, Sendable {
        /// SQLCipher (encryption available).
        case sqlcipher = "SQLCipher"
        /// The system's SQLite library (no encryption).
        case systemSQLite = "SQLite"
    }

    /// The library this build links.
    public static var kind: Kind {
        #if SQLCipher
        return .sqlcipher
        #else
        return .systemSQLite
        #endif
    }

    /// True when this build can open and create encrypted databases.
    public static var supportsEncryption: Bool { kind == .sqlcipher }

    /// The SQLite version of the loaded library, e.g. "3.46.1".
    public static var sqliteVersion: String { String(cString: sqlite3_libversion()) }

    /// The SQLite version number of the loaded library, e.g. 3046001.
    public static var sqliteVersionNumber: Int { Int(sqlite3_libversion_number()) }

    /// False when the library was built without lookaside memory (`SQLITE_OMIT_LOOKASIDE`, as
    /// Debian's is): `DatabaseConfiguration.lookasideSlots` then has no effect.
    public static var hasLookaside: Bool { sqlite3_compileoption_used("OMIT_LOOKASIDE") == 0 }

    /// The SQLCipher version of the loaded library (e.g. "4.6.1 community"), or nil without SQLCipher.
    public static var cipherVersion: String? {
        #if SQLCipher
        return (try? checkLoadedLibrary()).flatMap { _ in cachedCipherVersion.withLock { $0 } }
        #else
        return nil
        #endif
    }

    /// A one-line description such as "SQLCipher 4.6.1 community (SQLite 3.46.1)".
    public static var versionDescription: String {
        if let cipherVersion {
            return "SQLCipher \(cipherVersion) (SQLite \(sqliteVersion))"
        }
        return "SQLite \(sqliteVersion)"
    }

    /// The SQLite version the headers of this build describe.
    static var compiledVersionNumber: Int { Int(SQLITE_VERSION_NUMBER) }

    private static let selfCheck = Mutex<Result<Void, SQLiteError>?>(nil)
    #if SQLCipher
    private static let cachedCipherVersion = Mutex<String?>(nil)
    #endif

    /// Checks, once per process, that the loaded library is the one the headers describe.
    ///
    /// A foreign libsqlite3 loaded first in the process would otherwise silently take over our calls
    /// and write plaintext files that were meant to be encrypted. Called by every `Connection` open.
    /// - Throws: `SQLiteError.engineMismatch` when the loaded library is not the expected one.
    package static func checkLoadedLibrary() throws(SQLiteError) {
        let result = selfCheck.withLock { state -> Result<Void, SQLiteError> in
            if let state { return state }
            let computed = runSelfCheck()
            state = computed
            return computed
        }
        try result.get()
    }

    private static func runSelfCheck() -> Result<Void, SQLiteError> {
        let loaded = Int(sqlite3_libversion_number())
        guard loaded == compiledVersionNumber else {
            return .failure(.engineMismatch(
                "the loaded SQLite library is version \(loaded), but Ferry was compiled against \(compiledVersionNumber); "
                    + "another SQLite library in the process may be interposing its symbols"))
        }
        #if SQLCipher
        guard sqlite3_compileoption_used("HAS_CODEC") == 1 else {
            return .failure(.engineMismatch(
                "the loaded library was built without HAS_CODEC: it is not SQLCipher and cannot encrypt"))
        }
        // Activate SQLCipher once, read its version, and stop its default logging to the app's stderr
        // (SQLCipher resets its log target at first activation, so this must come after a key is set).
        var db: OpaquePointer?
        guard sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let db else {
            sqlite3_close(db)
            return .failure(.engineMismatch("cannot open an in-memory database to check SQLCipher"))
        }
        defer { sqlite3_close(db) }
        let activationKey: [UInt8] = Array("ferry-self-check".utf8)
        _ = sqlite3_key_v2(db, "main", activationKey, Int32(activationKey.count))
        var version: String?
        var statement: OpaquePointer?
        if sqlite3_prepare_v2(db, "PRAGMA cipher_version", -1, &statement, nil) == SQLITE_OK,
           sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) {
            version = String(cString: text)
        }
        sqlite3_finalize(statement)
        guard let version, !version.isEmpty else {
            return .failure(.engineMismatch("the loaded library does not answer PRAGMA cipher_version: it is not SQLCipher"))
        }
        guard version.hasPrefix("4.") else {
            return .failure(.engineMismatch("Ferry needs SQLCipher 4, but the loaded library is SQLCipher \(version)"))
        }
        sqlite3_exec(db, "PRAGMA cipher_log = 'off'", nil, nil, nil)
        cachedCipherVersion.withLock { $0 = version }
        #endif
        SQLiteLog.install()
        return .success(())
    }
}
