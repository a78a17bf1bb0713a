import FerrySQLite
import Dispatch
import Foundation
import Ferry

/// The baselines' checkpoints, handled like Ferry's: their connections set `wal_autocheckpoint = 0`
/// and, after each batch, a passive checkpoint runs from another connection on a background queue
/// once a WAL file passes 1 MB (Ferry's `Checkpointer` threshold, 250 pages of 4 KiB). Without this
/// the baselines would carry SQLite's automatic 20-40 ms checkpoints inside their commits and
/// Ferry would be compared with a handicapped loop.
final class SideCheckpointer: @unchecked Sendable {
    private let queue = DispatchQueue(label: "ferry-bench.checkpointer", qos: .utility)
    private let lock = NSLock()
    private var running = false
    private var connection: Connection?  // used on `queue` only
    private let open: @Sendable () throws -> Connection
    private let walFiles: [String]
    private let thresholdBytes = 250 * 4096
    private(set) var checkpoints = 0

    init(walFiles: [String], open: @escaping @Sendable () throws -> Connection) {
        self.walFiles = walFiles
        self.open = open
    }

    /// True when one of `files` exists and holds more than `bytes`.
    static func anyFile(_ files: [String], largerThan bytes: Int) -> Bool {
        files.contains { path in
            var info = stat()
            return stat(path, &info) == 0 && Int(info.st_size) > bytes
        }
    }

    /// Starts a background checkpoint when a WAL file is over the threshold and none is running.
    func checkpointIfNeeded() {
        guard Self.anyFile(walFiles, largerThan: thresholdBytes) else { return }
        lock.lock()
        guard !running else {
            lock.unlock()
            return
        }
        running = true
        lock.unlock()
        queue.async { [self] in
            defer {
                lock.lock()
                running = false
                lock.unlock()
            }
            do {
                if connection == nil { connection = try open() }
                try connection?.execute("PRAGMA wal_checkpoint(PASSIVE)")
                lock.lock()
                checkpoints += 1
                lock.unlock()
            } catch {
                connection = nil
            }
        }
    }

    /// Waits for a running checkpoint and closes the connection.
    func close() {
        queue.sync {
            connection?.close()
            connection = nil
        }
    }
}
