import FerrySQLite
import Foundation

/// What identifies a registered source file, recorded at registration and checked every time the
/// source is attached: a file put in its place (another database at the same path, with the same
/// table names) must not feed the target, nor lose rows to cleanup.
///
/// - An encrypted file's first 16 bytes are its SQLCipher salt, random per file and never
///   rewritten: the same salt is the same file (or a byte copy of it).
/// - For every source table Ferry reads, the largest rowid at registration (the last primary key,
///   for a table without rowid) and a digest of that row's values. A source is read-only while it migrates, and cleanup deletes rows in rowid order
///   (this one last): while a table migrates its row must be there, unchanged; once cleanup
///   started, it may be gone.
///
/// The key is never part of it. A byte copy of the registered file, or the file restored from a
/// backup, has the same fingerprint; a re-encrypted (new salt) or rewritten file does not, and the
/// migration's cursor (rowids of the registered file) would not apply to it anyway.
struct SourceFingerprint: Codable, Sendable, Hashable {
    /// The largest rowid of one source table at registration, and a digest of its row.
    struct Sample: Codable, Sendable, Hashable {
        /// The rowid (nil: the table was empty, or has no rowid).
        var rowid: Int64?
        /// For a table without rowid: its last row's key in primary-key order (`ferry_key`, hex).
        var key: String?
        /// The lowercase hex SHA-256 of the row's values (as SQLite quotes them).
        var digest: String?
    }

    /// The salt of an encrypted file (hex), nil for a plain one.
    var salt: String?
    /// Samples by lower-cased source table name.
    var tables: [String: Sample]

    /// The JSON text stored in the catalog.
    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// Decodes the catalog's JSON (nil when absent or unreadable).
    static func decode(_ json: String?) -> SourceFingerprint? {
        json.flatMap { try? JSONDecoder().decode(SourceFingerprint.self, from: Data($0.utf8)) }
    }
}
