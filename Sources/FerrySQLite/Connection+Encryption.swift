#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif

extension Connection {
    /// Changes the key of an encrypted database in place (`sqlite3_rekey`); the cipher settings stay.
    ///
    /// To encrypt a plain database, decrypt an encrypted one, or change cipher settings, use
    /// `export(to:cipher:)`.
    /// - Throws: `SQLiteError.unsupported` without SQLCipher or on a plain database.
    package func rekey(to key: CipherKey) throws(SQLiteError) {
        #if SQLCipher
        let db = try requireHandle()
        guard configuration.cipher != nil else {
            throw .unsupported("rekey changes the key of an encrypted database; use export(to:cipher:) to encrypt a plain one")
        }
        let rc = key.material.withBytes { bytes in
            sqlite3_rekey_v2(db, "main", bytes.baseAddress, Int32(bytes.count))
        }
        guard rc == SQLITE_OK else { throw .fromConnection(db, code: rc, sql: nil) }
        #else
        throw .unsupported("encryption needs the SQLCipher trait; this build links the system SQLite")
        #endif
    }

    /// Writes a full copy of this database to a new file at `path`, encrypted with `cipher`, or plain
    /// when `cipher` is nil: encrypts a plain database, decrypts an encrypted one, or changes
    /// cipher settings. The file must not exist yet.
    /// - Throws: `SQLiteError.invalidArguments` when `path` exists, `SQLiteError.unsupported` when a
    ///   cipher is given in a build without SQLCipher.
    package func export(to path: String, cipher: Cipher?) throws(SQLiteError) {
        _ = try requireHandle()
        if FileManagerShim.fileExists(path) {
            throw .invalidArguments("export needs a new file, but \(path) exists")
        }
        #if SQLCipher
        try cipher?.settings.check()
        let schema = "ferry_export"
        try attach(path: path, as: schema, cipher: cipher, allowCreate: true)
        do {
            try execute("SELECT sqlcipher_export(?)", [.text(schema)])
        } catch {
            try? detach(schema)
            throw error
        }
        try detach(schema)
        #else
        if cipher != nil {
            throw .unsupported("encryption needs the SQLCipher trait; this build links the system SQLite")
        }
        try execute("VACUUM INTO ?", [.text(path)])
        #endif
    }

    /// Attaches another database file under `schema`, with its own cipher (or none).
    ///
    /// Under SQLCipher a plain file is attached with an explicit empty key, so it never inherits the
    /// main database's key, and an encrypted file is keyed and configured before its first page is
    /// read. The file is read at once: a wrong key fails here.
    /// - Throws: `SQLiteError.fileNotFound` when the file is missing and `allowCreate` is false,
    ///   `SQLiteError.wrongKeyOrNotADatabase` for a wrong key or a file that is not a database.
    public func attach(path: String, as schema: String, cipher: Cipher? = nil, allowCreate: Bool = false) throws(SQLiteError) {
        _ = try requireHandle()
        if !allowCreate && !FileManagerShim.fileExists(path) {
            throw .fileNotFound(path: path)
        }
        if cipher != nil && !SQLiteEngine.supportsEncryption {
            throw .unsupported("encryption needs the SQLCipher trait; this build links the system SQLite")
        }
        try cipher?.settings.check()
        #if SQLCipher
        let keyValue: Value
        if let cipher {
            keyValue = cipher.key.material.withBytes { .blob(Array($0)) }
        } else {
            keyValue = .text("")
        }
        if let cipher {
            // SQLCipher reads page 1 during ATTACH, so per-schema pragmas would come too late.
            // Attach with the process-wide defaults set to this source's settings, then restore them.
            // The defaults are global: `CipherDefaults` serializes every keyed attach, including
            // those with default settings, which must not see another attach's temporary defaults.
            do throws(SQLiteError) {
                try CipherDefaults.withSettings(cipher.settings, on: self) { () throws(SQLiteError) in
                    try attachStatement(path: path, schema: schema, key: keyValue)
                    _ = try fetchOne("SELECT count(*) FROM \(quoteIdentifier(schema)).sqlite_master")  // derive the key now
                }
            } catch let error where error.resultCode.primary == .notADatabase {
                // SQLCipher reads the file's salt once, when the key is set, and takes a random one
                // when that read fails: a transient I/O error then looks like a wrong key. Attach
                // once more (reading the salt again) before saying so.
                try? detach(schema)
                try CipherDefaults.withSettings(cipher.settings, on: self) { () throws(SQLiteError) in
                    try attachStatement(path: path, schema: schema, key: keyValue)
                    _ = try fetchOne("SELECT count(*) FROM \(quoteIdentifier(schema)).sqlite_master")
                }
            }
        } else {
            try CipherDefaults.withStableDefaults { () throws(SQLiteError) in
                try attachStatement(path: path, schema: schema, key: keyValue)
                _ = try? fetchOne("SELECT count(*) FROM \(quoteIdentifier(schema)).sqlite_master")  // derive the key now
            }
        }
        #else
        try attachStatement(path: path, schema: schema, key: nil)
        #endif
        do {
            _ = try fetchOne("SELECT count(*) FROM \(quoteIdentifier(schema)).sqlite_master")
            // PRAGMA synchronous is per schema: the attached file gets the connection's setting
            // (SQLite's default, FULL, would fsync the attached WAL at every commit).
            if let synchronous = configuration.synchronous {
                try execute("PRAGMA \(quoteIdentifier(schema)).synchronous = \(synchronous.rawValue)")
            }
        } catch let error {
            try? detach(schema)
            if error.resultCode.primary == .notADatabase { throw .wrongKeyOrNotADatabase(path: path) }
            throw error
        }
    }

    private func attachStatement(path: String, schema: String, key: Value?) throws(SQLiteError) {
        do {
            if let key {
                try execute("ATTACH DATABASE ? AS \(quoteIdentifier(schema)) KEY ?", [.text(path), key])
            } else {
                try execute("ATTACH DATABASE ? AS \(quoteIdentifier(schema))", [.text(path)])
            }
        } catch let error {
            if error.resultCode.primary == .notADatabase { throw .wrongKeyOrNotADatabase(path: path) }
            throw error
        }
    }

    /// Detaches an attached database.
    package func detach(_ schema: String) throws(SQLiteError) {
        try execute("DETACH DATABASE \(quoteIdentifier(schema))")
    }

    /// The cipher settings a schema of this connection uses, as SQLCipher reports them
    /// (`cipher_page_size`, `kdf_iter`, ...); empty without SQLCipher or for plain databases.
    package func cipherSettingsReport(schema: String = "main") throws(SQLiteError) -> [String: String] {
        #if SQLCipher
        var report: [String: String] = [:]
        for name in ["cipher_page_size", "kdf_iter", "cipher_hmac_algorithm", "cipher_kdf_algorithm", "cipher_use_hmac", "cipher_plaintext_header_size"] {
            if let row = try fetchOne("PRAGMA \(quoteIdentifier(schema)).\(name)"), row.count > 0, !row[0].isNull {
                report[name] = "\(row[0])".trimmingQuotes
            }
        }
        return report
        #else
        return [:]
        #endif
    }
}

extension String {
    var trimmingQuotes: String {
        guard count >= 2, first == "'", last == "'" else { return self }
        return String(dropFirst().dropLast())
    }
}
