import Ferry
import Foundation
import Synchronization

/// What a running command opened, for its error report: the target file errors are about, and
/// the journal mode it had, restored when the command fails.
///
/// Ferry opens targets in WAL mode (the app reads while a step writes). A command that fails
/// leaves the file as it found it: a rollback-journal database stays one. A command that
/// succeeds leaves it in WAL mode.
enum CommandContext {
    /// The target a command opened.
    struct Target: Sendable {
        let path: String
        let cipher: Cipher?
        /// `PRAGMA journal_mode` before the command (nil when it could not be read, or the file is new).
        let journalMode: String?
    }

    private static let target = Mutex<Target?>(nil)

    /// Records `path` as the command's target, reading its journal mode first.
    static func opening(_ path: String, cipher: Cipher?) {
        var mode: String?
        if FileManager.default.fileExists(atPath: path),
           let db = try? Connection(path: path, configuration: .init(readOnly: true, createIfMissing: false, cipher: cipher, journalMode: .keep)) {
            mode = try? db.scalar("PRAGMA main.journal_mode", as: String.self)
            db.close()
        }
        target.withLock { $0 = Target(path: path, cipher: cipher, journalMode: mode) }
    }

    /// The path of the command's target, if it opened one.
    static var targetPath: String? { target.withLock { $0?.path } }

    /// After a failed command (its database closed): puts the target's journal mode back.
    static func restoreAfterFailure() {
        guard let opened = target.withLock({ $0 }), let mode = opened.journalMode?.lowercased(), mode != "wal",
              FileManager.default.fileExists(atPath: opened.path),
              let db = try? Connection(path: opened.path, configuration: .init(createIfMissing: false, cipher: opened.cipher, journalMode: .keep))
        else { return }
        defer { db.close() }
        if (try? db.scalar("PRAGMA main.journal_mode", as: String.self))?.lowercased() == "wal" {
            _ = try? db.fetchAll("PRAGMA main.journal_mode = \(mode)")
        }
    }
}
