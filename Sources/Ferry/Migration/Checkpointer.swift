import Dispatch
import Foundation
import Synchronization

/// Keeps WAL files small while rows move, so checkpoints never land inside a batch.
///
/// SQLite checkpoints a WAL automatically in the commit that crosses 1000 pages; measured here,
/// that puts 20-40 ms into a 1-2 ms batch (env.md section 5). The checkpointer instead runs
/// `PRAGMA wal_checkpoint(PASSIVE)` from its own connection on its own queue whenever a WAL passes
/// `thresholdBytes` (250 pages of 4 KiB by default). A passive checkpoint copies committed frames
/// without taking the write lock, so batches and app writes carry on meanwhile; the automatic
/// checkpoint stays on as a safety net for writes made while no migration runs.
///
/// A WAL file keeps its size after a checkpoint (SQLite rewrites it from the start), so Ferry's
/// connections set `journal_size_limit` to half the threshold: the next write after a complete
/// checkpoint truncates the file, and its size measures the WAL's content again.
final class Checkpointer: Sendable {
    private let queue = DispatchQueue(label: "ferry.checkpointer", qos: .utility)
    private let state = Mutex(State())
    private let open: @Sendable () throws -> Connection
    private let walFiles: @Sendable () -> [String]
    let thresholdBytes: Int

    private struct State {
        var running = false
        var connection: ConnectionHolder?
        var checkpoints = 0
    }

    /// - Parameters:
    ///   - open: opens a connection on the target with every source attached.
    ///   - walFiles: the WAL files to watch (target and attached sources).
    init(thresholdBytes: Int = 250 * 4096, open: @escaping @Sendable () throws -> Connection, walFiles: @escaping @Sendable () -> [String]) {
        self.thresholdBytes = thresholdBytes
        self.open = open
        self.walFiles = walFiles
    }

    /// How many checkpoints ran (for tests and benchmarks).
    var checkpointCount: Int { state.withLock { $0.checkpoints } }

    /// Starts a background checkpoint if a watched WAL is over the threshold and none is running.
    func checkpointIfNeeded() {
        let needed = walFiles().contains { path in
            var info = stat()
            return stat(path, &info) == 0 && Int(info.st_size) > thresholdBytes
        }
        guard needed else { return }
        let start = state.withLock { s -> Bool in
            guard !s.running else { return false }
            s.running = true
            return true
        }
        guard start else { return }
        queue.async { [self] in
            defer { state.withLock { $0.running = false } }
            do {
                let holder = try state.withLock { s -> ConnectionHolder? in s.connection } ?? ConnectionHolder(try open())
                state.withLock { $0.connection = holder }
                // Every attached database: the target and the sources.
                try holder.connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
                state.withLock { $0.checkpoints += 1 }
            } catch {
                // A failed checkpoint loses nothing; SQLite's automatic checkpoint remains.
                state.withLock { $0.connection = nil }
            }
        }
    }

    /// Closes the checkpointer's connection after any running checkpoint.
    func close() {
        queue.sync {
            let holder = state.withLock { s -> ConnectionHolder? in
                defer { s.connection = nil }
                return s.connection
            }
            holder?.connection.close()
        }
    }
}

/// A connection used only on the checkpointer's serial queue.
final class ConnectionHolder: @unchecked Sendable {
    let connection: Connection
    init(_ connection: Connection) { self.connection = connection }
}
