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

    /// Runs `body` (keying a connection with the defaults as they are) while no attach changes them:
    /// SQLCipher copies the process-wide defaults into a database's codec when it is keyed.
    static func whileUnchanged<T>(_ body: () throws(FerryError) -> T) throws(FerryError) -> T {
        try lock.withLock { _ throws(FerryError) in try body() }
    }

    static func withSettings(_ settings: CipherSettings, on connection: Connection,
                             _ body: () throws(FerryError) -> Void) throws(FerryError) {
        try lock.withLock { _ throws(FerryError) in
            var saved: [(String, String)] = []
            for pragma in settings.pragmas {
                let name = pragma.name.replacingOccurrences(of: "cipher_", with: "cipher_default_", options: .anchored)
                let defaultName = name == "kdf_iter" ? "cipher_default_kdf_iter" : name
                if defaultName != "cipher_default_compatibility",
                   let row = try connection.fetchOne("PRAGMA \(defaultName)"), row.count > 0 {
                    saved.append((defaultName, "\(row[0])".trimmingQuotes))
                }
                try connection.execute("PRAGMA \(defaultName) = \(pragma.value)")
            }
            defer {
                // Compatibility 4 restores every default; then the individually saved values.
                try? connection.execute("PRAGMA cipher_default_compatibility = 4")
                for (name, value) in saved { try? connection.execute("PRAGMA \(name) = \(value)") }
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
