import Foundation
import Synchronization

/// Serializes changes to SQLCipher's process-wide `cipher_default_*` settings.
///
/// Attaching an encrypted file with non-default settings requires the defaults to match while the
/// ATTACH reads its first page. Every such attach in the process goes through this lock, sets the
/// defaults, attaches, and restores the defaults before releasing it, so other connections (which
/// open with their own explicit settings) never see foreign defaults.
enum CipherDefaults {
    private static let lock = Mutex<Void>(())

    /// Runs `body` while no attach has changed the defaults: SQLCipher copies them into a
    /// connection's codec when a key is set, so keying must not overlap such an attach.
    static func withStableDefaults<R>(_ body: () throws(SQLiteError) -> R) throws(SQLiteError) -> R {
        try lock.withLock { _ throws(SQLiteError) -> R in try body() }
    }

    static func withSettings(_ settings: CipherSettings, on connection: Connection,
                             _ body: () throws(SQLiteError) -> Void) throws(SQLiteError) {
        try lock.withLock { _ throws(SQLiteError) in
            let names = settings.pragmas.map { pragma -> (name: String, value: String) in
                let name = pragma.name.replacingOccurrences(of: "cipher_", with: "cipher_default_", options: .anchored)
                return (name == "kdf_iter" ? "cipher_default_kdf_iter" : name, pragma.value)
            }
            // Save every default before changing any: `cipher_default_compatibility` changes the
            // others, so a value read after it would "restore" the compatibility's default.
            var saved: [(String, String)] = []
            for (name, _) in names where name != "cipher_default_compatibility" {
                if let row = try connection.fetchOne("PRAGMA \(name)"), row.count > 0 {
                    saved.append((name, "\(row[0])".trimmingQuotes))
                }
            }
            defer {
                // Compatibility 4 restores every default; then the individually saved values.
                try? connection.execute("PRAGMA cipher_default_compatibility = 4")
                for (name, value) in saved { try? connection.execute("PRAGMA \(name) = \(value)") }
            }
            for (name, value) in names {
                try connection.execute("PRAGMA \(name) = \(value)")
            }
            try body()
        }
    }
}

/// File existence without dragging FileManager into every call site.
enum FileManagerShim {
    static func fileExists(_ path: String) -> Bool {
        path != ":memory:" && !path.isEmpty && FileManager.default.fileExists(atPath: path)
    }
}
