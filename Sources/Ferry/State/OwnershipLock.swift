import FerrySQLite
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The exclusive lock that makes one `FerryDatabase` at a time the owner of a target database.
///
/// Each instance keeps its migration state in memory (cursors, the tables still migrating, the
/// redirect triggers), so two instances on one target would step from stale cursors (copying rows
/// twice into quarantine, or cleaning sources from an outdated view) and rewrite the app's
/// statements for tables the other already finished. The owner holds an exclusive `flock` on
/// `<target>-ferry.lock` for as long as it is open; another instance (in another process, or in
/// the same one: a `flock` belongs to one open file description) fails to open with
/// `FerryError.migrationOwnedByAnotherProcess`. The kernel releases the lock when the owner closes
/// or its process dies, even by `kill -9`. The file itself is never deleted (deleting a lock file
/// would let two processes lock two different files); it holds the owner's process id, for people.
final class OwnershipLock: Sendable {
    /// The lock file.
    let path: String
    private let descriptor: Mutex<Int32>

    /// The lock file of a target: next to the file the path leads to, so that a symbolic link to
    /// the target locks the same file.
    static func lockPath(forTarget target: String) -> String {
        URL(fileURLWithPath: target).resolvingSymlinksInPath().path + "-ferry.lock"
    }

    /// Takes the lock on `target`, waiting up to `timeout` for its owner to let go.
    /// - Throws: `FerryError.migrationOwnedByAnotherProcess` when another instance keeps it,
    ///   `FerryError.sqlite` (`SQLITE_CANTOPEN`) when the lock file cannot be created or locked.
    ///   `FerryError.sqlite` (`SQLITE_CANTOPEN`) before creating anything when the target is not a
    ///   regular file (a device, a directory, a pipe) or has several hard links (SQLite keeps a
    ///   journal next to each name: two names would be two owners and two journals), and when the
    ///   lock path is a symbolic link or not a regular file.
    init(target: String, timeout: Duration) throws(FerryError) {
        path = Self.lockPath(forTarget: target)
        // The lock file gets the target's permissions (a 0600 database gets a 0600 lock file);
        // SQLite's default for a new database otherwise.
        var mode: mode_t = 0o644
        var info = stat()
        if stat(target, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFREG else {
                throw .sqlite(code: .cantOpen, message: "\(target) is not a regular file (a device, directory or pipe): it cannot be a database Ferry migrates", sql: nil)
            }
            guard info.st_nlink <= 1 else {
                throw .sqlite(code: .cantOpen, message: "\(target) has \(info.st_nlink) hard links: SQLite keeps a journal next to each name, so a database with several names cannot be migrated safely; open it by one name and remove the others", sql: nil)
            }
            mode = info.st_mode & 0o666
        }
        // O_NOFOLLOW: a symbolic link at the lock path is refused, never followed (it could make
        // Ferry truncate another file). O_CLOEXEC: a process the app spawns must not inherit (and
        // keep) the lock.
        var created = true
        var fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        if fd < 0 && errno == EEXIST {
            created = false
            fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        }
        guard fd >= 0 else {
            if errno == ELOOP {
                throw .sqlite(code: .cantOpen, message: "the lock file \(path) is a symbolic link; Ferry does not follow it (remove it)", sql: nil)
            }
            throw Self.failure("cannot open the lock file \(path)")
        }
        var lockInfo = stat()
        guard fstat(fd, &lockInfo) == 0, (lockInfo.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw .sqlite(code: .cantOpen, message: "the lock file \(path) is not a regular file (remove it)", sql: nil)
        }
        if created { _ = fchmod(fd, mode) }  // the umask may have narrowed it further than the target
        let deadline = ContinuousClock.now + max(.zero, timeout)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let error = errno
            guard error == EWOULDBLOCK || error == EINTR else {
                let failure = Self.failure("cannot lock \(path)")
                close(fd)
                throw failure
            }
            guard ContinuousClock.now < deadline else {
                close(fd)
                throw .migrationOwnedByAnotherProcess(path: target)
            }
            usleep(5_000)
        }
        let owner = Array("\(getpid())\n".utf8)
        if ftruncate(fd, 0) == 0 { _ = owner.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } }
        descriptor = Mutex(fd)
    }

    private static func failure(_ what: String) -> FerryError {
        .sqlite(code: .cantOpen, message: "\(what): \(String(cString: strerror(errno)))", sql: nil)
    }

    /// Lets go of the lock (closing the descriptor releases it). Releasing twice does nothing.
    func release() {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            close(fd)
            fd = -1
        }
    }

    deinit { release() }
}
