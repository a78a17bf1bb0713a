import FerrySQLite
import Foundation

/// The keys of the sources' files, as the app supplied them with its plans: in memory only, never
/// written anywhere (the catalog records whether a source is encrypted and its cipher settings).
final class SourceCiphers: @unchecked Sendable {
    private let lock = NSLock()
    private var ciphers: [String: Cipher] = [:]  // by resolved absolute source path

    /// Remembers the ciphers of the plan's sources.
    func supply(from plan: MigrationPlan) {
        lock.lock()
        defer { lock.unlock() }
        for source in plan.sources {
            if case .file(let path) = source.location, let cipher = source.cipher {
                ciphers[URL(fileURLWithPath: path).standardizedFileURL.path] = cipher
            }
        }
    }

    /// The cipher `source` (at resolved `path`) opens with: the supplied key, with the registered
    /// settings unless others were supplied; nil for a plain file.
    /// - Throws: `FerryError.missingSourceKey` for an encrypted file whose key was not supplied.
    func cipher(of source: SourceRecord, path: String) throws(FerryError) -> Cipher? {
        guard source.encrypted else { return nil }
        lock.lock()
        let supplied = ciphers[path]
        lock.unlock()
        guard var supplied else { throw .missingSourceKey(path: path) }
        if supplied.settings == CipherSettings(), let settings = source.cipherSettings { supplied.settings = settings }
        return supplied
    }
}
