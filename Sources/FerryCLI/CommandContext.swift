#if CommandLineTool
import FerrySQLite
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

    /// Records `path` as the command's target, reading its journal mode first: from the file
    /// header of a plain database (byte 18 is 2 in WAL mode; the rollback-journal modes are not
    /// stored, they all read back as DELETE), from SQLite for an encrypted one (its header is
    /// encrypted).
    static func opening(_ path: String, cipher: Cipher?) {
        var mode: String?
        if let header = firstBytes(of: path, count: 20), header.count == 20, header.starts(with: Array("SQLite format 3\u{0}".utf8)) {
            mode = header[header.startIndex + 18] == 2 ? "wal" : "delete"
        } else if cipher != nil, FileManager.default.fileExists(atPath: path),
                  let db = try? Connection(path: path, configuration: .init(readOnly: true, createIfMissing: false, cipher: cipher, journalMode: .keep)) {
            mode = try? db.scalar("PRAGMA main.journal_mode", as: String.self)
            db.close()
        }
        target.withLock { $0 = Target(path: path, cipher: cipher, journalMode: mode) }
    }

    /// The first bytes of a regular file (nil for anything else: reading a pipe would block).
    private static func firstBytes(of path: String, count: Int) -> Data? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return try? handle.read(upToCount: count)
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
#endif
