#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the file system says about a source file and its WAL: device, inode, size and the time of
/// the last change to its content or metadata (`st_ctime`, which no program can set back).
///
/// A source's fingerprint (`SourceFingerprint`) is checked when Ferry attaches the file and, at
/// each step, only when the stamp changed since a check passed (`SourceAttacher`): any write to
/// either file, by SQLite or by a program that copies another file over it in place, changes its
/// `st_ctime`; a file renamed into the path has another inode. Reading the fingerprint costs a
/// read transaction and the table's shape (about a tenth of a 300-row move step's instructions);
/// the stamp costs two `stat` calls.
struct SourceFileStamp: Sendable, Equatable {
    private struct Entry: Sendable, Equatable {
        let device: UInt64
        let inode: UInt64
        let size: Int64
        let changedSeconds: Int64
        let changedNanoseconds: Int64
    }

    private let database: Entry
    /// The WAL's, or nil when there is none (a rollback-journal source, or a WAL SQLite removed).
    private let log: Entry?

    /// The stamp of the database file at `path` and its `-wal`; nil when the database file cannot
    /// be read (the caller then checks the fingerprint, which reports why).
    init?(path: String) {
        guard let database = Self.entry(path) else { return nil }
        self.database = database
        log = Self.entry(path + "-wal")
    }

    private static func entry(_ path: String) -> Entry? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
        let changed = info.st_ctimespec
        #else
        let changed = info.st_ctim
        #endif
        return Entry(device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino), size: Int64(info.st_size),
                     changedSeconds: Int64(changed.tv_sec), changedNanoseconds: Int64(changed.tv_nsec))
    }
}
