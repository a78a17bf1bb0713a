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

    /// Takes the lock on `target`, waiting up to `timeoutMilliseconds` for its owner to let go.
    /// - Throws: `FerryError.migrationOwnedByAnotherProcess` when another instance keeps it,
    ///   `FerryError.sqlite` (`SQLITE_CANTOPEN`) when the lock file cannot be created or locked.
    init(target: String, timeoutMilliseconds: Int) throws(FerryError) {
        path = Self.lockPath(forTarget: target)
        // O_CLOEXEC: a process the app spawns must not inherit (and keep) the lock.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Self.failure("cannot open the lock file \(path)") }
        let deadline = ContinuousClock.now + .milliseconds(max(0, timeoutMilliseconds))
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
