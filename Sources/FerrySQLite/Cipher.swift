/// How a database file is encrypted: a key and the SQLCipher settings it was created with.
///
/// ```swift
/// let v4 = Cipher.passphrase("secret")                                  // SQLCipher 4 defaults
/// let v3 = Cipher.passphrase("secret", settings: .sqlcipher3)           // files from SQLCipher 3.x
/// let raw = try Cipher.rawKey(keyBytes, salt: saltBytes)                // skips key derivation
/// ```
/// A `Cipher` never prints its key: `description` shows the settings only.
public struct Cipher: Sendable, Hashable, CustomStringConvertible {
    /// The key.
    public var key: CipherKey
    /// The settings the file was (or will be) created with.
    public var settings: CipherSettings

    /// Creates a cipher from a key and settings.
    public init(key: CipherKey, settings: CipherSettings = .init()) {
        self.key = key
        self.settings = settings
    }

    /// A passphrase, stretched by SQLCipher's key derivation (PBKDF2) when the database is opened.
    public static func passphrase(_ passphrase: String, settings: CipherSettings = .init()) -> Cipher {
        Cipher(key: .passphrase(passphrase), settings: settings)
    }

    /// A raw 32-byte key (and optionally the file's 16-byte salt); no key derivation runs.
    /// - Throws: `SQLiteError.invalidArguments` for a key that is not 32 bytes or a salt that is not 16.
    package static func checkedRawKey(_ key: [UInt8], salt: [UInt8]? = nil, settings: CipherSettings = .init()) throws(SQLiteError) -> Cipher {
        Cipher(key: try .checkedRaw(key, salt: salt), settings: settings)
    }

    public var description: String { "Cipher(key: \(key), settings: \(settings))" }
}

/// A key for SQLCipher: a passphrase or raw key bytes. Its description never shows the key.
public struct CipherKey: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Hashable { case passphrase, raw, rawWithSalt }
    let kind: Kind
    /// The bytes handed to `sqlite3_key`: the passphrase, or `x'<hex key>[<hex salt>]'` for raw keys.
    let material: SecretBytes

    /// A passphrase.
    public static func passphrase(_ passphrase: String) -> CipherKey {
        CipherKey(kind: .passphrase, material: SecretBytes(passphrase.utf8))
    }

    /// A raw 32-byte key, optionally with the database's 16-byte salt.
    /// - Throws: `SQLiteError.invalidArguments` for wrong lengths.
    package static func checkedRaw(_ key: [UInt8], salt: [UInt8]? = nil) throws(SQLiteError) -> CipherKey {
        guard key.count == 32 else { throw .invalidArguments("a raw key must be 32 bytes, got \(key.count)") }
        if let salt, salt.count != 16 { throw .invalidArguments("a salt must be 16 bytes, got \(salt.count)") }
        let hex = Array(("x'" + key.hexString + (salt?.hexString ?? "") + "'").utf8)
        return CipherKey(kind: salt == nil ? .raw : .rawWithSalt, material: SecretBytes(hex))
    }

    /// A raw key written as 64 hexadecimal digits (or 96 with the salt).
    /// - Throws: `SQLiteError.invalidArguments` when the text is not 64 or 96 hex digits.
    package static func checkedRaw(hex: String) throws(SQLiteError) -> CipherKey {
        let digits = Array(hex.utf8)
        guard digits.count == 64 || digits.count == 96, digits.allSatisfy({ $0.isHexDigit }) else {
            throw .invalidArguments("a raw key must be 64 hexadecimal digits (96 with a salt)")
        }
        var bytes: [UInt8] = []
        var i = 0
        while i < digits.count {
            bytes.append(digits[i].hexValue << 4 | digits[i + 1].hexValue)
            i += 2
        }
        return try checkedRaw(Array(bytes[0..<32]), salt: digits.count == 96 ? Array(bytes[32...]) : nil)
    }

    public var description: String {
        switch kind {
        case .passphrase: return "passphrase(<redacted>)"
        case .raw: return "raw(<redacted>)"
        case .rawWithSalt: return "raw(<redacted>, salt: <redacted>)"
        }
    }
}

extension UInt8 {
    var isHexDigit: Bool { (48...57).contains(self) || (65...70).contains(self) || (97...102).contains(self) }
    var hexValue: UInt8 {
        switch self {
        case 48...57: return self - 48
        case 65...70: return self - 55
        default: return self - 87
        }
    }
}

/// SQLCipher settings of a database file. `nil` fields keep the library's defaults (SQLCipher 4's).
///
/// Files created by SQLCipher 3.x need `compatibility: 3` (or `.sqlcipher3`): SQLCipher 4 cannot
/// read them with its own defaults.
public struct CipherSettings: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A SQLCipher major version whose defaults apply (1 to 4), set before any other setting.
    public var compatibility: Int?
    /// The page size in bytes (SQLCipher 3: 1024, SQLCipher 4: 4096).
    public var pageSize: Int?
    /// PBKDF2 iterations for passphrases (SQLCipher 3: 64000, SQLCipher 4: 256000).
    public var kdfIterations: Int?
    /// The HMAC algorithm of each page.
    public var hmacAlgorithm: HMACAlgorithm?
    /// The key derivation algorithm.
    public var kdfAlgorithm: KDFAlgorithm?
    /// Whether pages carry an HMAC.
    public var useHMAC: Bool?
    /// Bytes of the file header left unencrypted (iOS shared containers use 32).
    public var plaintextHeaderSize: Int?

    /// Settings with every field at the library's default.
    public init(compatibility: Int? = nil, pageSize: Int? = nil, kdfIterations: Int? = nil,
                hmacAlgorithm: HMACAlgorithm? = nil, kdfAlgorithm: KDFAlgorithm? = nil,
                useHMAC: Bool? = nil, plaintextHeaderSize: Int? = nil) {
        self.compatibility = compatibility
        self.pageSize = pageSize
        self.kdfIterations = kdfIterations
        self.hmacAlgorithm = hmacAlgorithm
        self.kdfAlgorithm = kdfAlgorithm
        self.useHMAC = useHMAC
        self.plaintextHeaderSize = plaintextHeaderSize
    }

    /// The defaults of SQLCipher 3.x (AES-256-CBC, HMAC-SHA1, 64000 iterations, 1024-byte pages).
    public static let sqlcipher3 = CipherSettings(compatibility: 3)
    /// The defaults of SQLCipher 4.x (HMAC-SHA512, 256000 iterations, 4096-byte pages).
    public static let sqlcipher4 = CipherSettings(compatibility: 4)

    /// HMAC algorithms SQLCipher supports.
    public enum HMACAlgorithm: String, Sendable, Hashable, Codable {
        case sha1 = "HMAC_SHA1", sha256 = "HMAC_SHA256", sha512 = "HMAC_SHA512"
    }

    /// Key derivation algorithms SQLCipher supports.
    public enum KDFAlgorithm: String, Sendable, Hashable, Codable {
        case sha1 = "PBKDF2_HMAC_SHA1", sha256 = "PBKDF2_HMAC_SHA256", sha512 = "PBKDF2_HMAC_SHA512"
    }

    /// Checks the values are in SQLCipher's ranges.
    /// - Throws: `SQLiteError.invalidArguments` naming the bad setting.
    package func check() throws(SQLiteError) {
        if let compatibility, !(1...4).contains(compatibility) {
            throw .invalidArguments("cipher compatibility must be 1, 2, 3 or 4, got \(compatibility)")
        }
        if let pageSize, pageSize < 512 || pageSize > 65536 || pageSize & (pageSize - 1) != 0 {
            throw .invalidArguments("cipher page size must be a power of two from 512 to 65536, got \(pageSize)")
        }
        if let kdfIterations, kdfIterations < 1 {
            throw .invalidArguments("cipher KDF iterations must be positive, got \(kdfIterations)")
        }
        if let plaintextHeaderSize, plaintextHeaderSize < 0 || plaintextHeaderSize > 100 || plaintextHeaderSize % 16 != 0 {
            throw .invalidArguments("cipher plaintext header size must be a multiple of 16 from 0 to 100, got \(plaintextHeaderSize)")
        }
    }

    /// The pragmas (without schema prefix) that apply these settings, in order: compatibility first.
    var pragmas: [(name: String, value: String)] {
        var out: [(String, String)] = []
        if let compatibility { out.append(("cipher_compatibility", String(compatibility))) }
        if let pageSize { out.append(("cipher_page_size", String(pageSize))) }
        if let kdfIterations { out.append(("kdf_iter", String(kdfIterations))) }
        if let hmacAlgorithm { out.append(("cipher_hmac_algorithm", hmacAlgorithm.rawValue)) }
        if let kdfAlgorithm { out.append(("cipher_kdf_algorithm", kdfAlgorithm.rawValue)) }
        if let useHMAC { out.append(("cipher_use_hmac", useHMAC ? "ON" : "OFF")) }
        if let plaintextHeaderSize { out.append(("cipher_plaintext_header_size", String(plaintextHeaderSize))) }
        return out
    }

    public var description: String {
        let parts = pragmas.map { "\($0.name)=\($0.value)" }
        return parts.isEmpty ? "defaults" : parts.joined(separator: ", ")
    }
}
