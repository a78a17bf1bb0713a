import FerrySQLite

/// The ciphers' checked constructors, throwing `FerryError` as the rest of Ferry's API does.
extension Cipher {
    /// A raw 32-byte key (and optionally the file's 16-byte salt); no key derivation runs.
    /// - Parameters:
    ///   - key: the 32 key bytes.
    ///   - salt: the database's 16-byte salt, when the file's first bytes are not its salt.
    ///   - settings: the SQLCipher settings the file was (or will be) created with.
    /// - Throws: `FerryError.invalidArguments` for a key that is not 32 bytes or a salt that is not 16.
    public static func rawKey(_ key: [UInt8], salt: [UInt8]? = nil, settings: CipherSettings = .init()) throws(FerryError) -> Cipher {
        try sqlite(checkedRawKey(key, salt: salt, settings: settings))
    }
}

extension CipherKey {
    /// A raw 32-byte key, optionally with the database's 16-byte salt.
    /// - Throws: `FerryError.invalidArguments` for wrong lengths.
    public static func raw(_ key: [UInt8], salt: [UInt8]? = nil) throws(FerryError) -> CipherKey {
        try sqlite(checkedRaw(key, salt: salt))
    }

    /// A raw key written as 64 hexadecimal digits (or 96 with the salt).
    /// - Throws: `FerryError.invalidArguments` when the text is not 64 or 96 hex digits.
    public static func raw(hex: String) throws(FerryError) -> CipherKey {
        try sqlite(checkedRaw(hex: hex))
    }
}

extension CipherSettings {
    /// Checks the values are in SQLCipher's ranges.
    /// - Throws: `FerryError.invalidArguments` naming the bad setting.
    public func validate() throws(FerryError) {
        try sqlite(check())
    }
}

extension SQLiteEngine {
    /// Checks, once per process, that the loaded SQLite library is the one this build was compiled
    /// for (every connection Ferry opens checks it too).
    /// - Throws: `FerryError.engineMismatch` when the loaded library is not the expected one.
    public static func verifyLoadedLibrary() throws(FerryError) {
        try sqlite(checkLoadedLibrary())
    }
}
