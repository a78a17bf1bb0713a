import Dispatch
import FerrySQLite
import Synchronization

/// Holds a read transaction open on each source file whose tables migrate, so that the app's
/// statements that read a source take its locks without a system call.
///
/// Every statement that reads an attached source begins a read transaction on its file: a shared
/// lock on the file and one on a WAL read mark, then their release, each an `fcntl` call. SQLite
/// keeps the locks a process holds per file, and a connection asking for a shared lock that
/// another connection of the process already holds gets it without asking the system. A pin, a
/// connection of its own reading the file in a transaction it never ends, is that other
/// connection. Measured with ferry-bench half-way through 200k rows on tmpfs: a lookup of a
/// pending key 9.4 µs unpinned, 7.8-8.0 µs pinned (5.6-5.8 µs on the finished table).
///
/// A pin keeps the file's WAL from being checkpointed past its snapshot and from restarting,
/// and a file with a rollback journal from being written at all. So only files in WAL mode are
/// pinned, and only while they have a table that migrates and none whose cleanup is due (cleanup
/// writes the file; Ferry writes a source at no other time). The pins follow the engine's epoch:
/// `refresh` (at every use of a connection) compares it, and opens and closes pins off the
/// caller's thread, since opening an encrypted file derives its key.
final class SourceReadPins: Sendable {
    private let queue = DispatchQueue(label: "ferry.source-pins", qos: .utility)
    private let seenEpoch = Atomic<Int>(-1)
    private let closed = Atomic<Bool>(false)
    private let pins = Mutex<[String: PinHolder]>([:])
    private let engine: MigrationEngine

    init(engine: MigrationEngine) {
        self.engine = engine
    }

    /// Brings the pins in line with the engine when its epoch moved (cheap otherwise: one
    /// comparison). The work runs on the pins' own queue.
    func refresh() {
        guard !closed.load(ordering: .relaxed) else { return }
        let epoch = engine.epoch
        guard seenEpoch.exchange(epoch, ordering: .relaxed) != epoch else { return }
        queue.async { [self] in reconcile() }
    }

    /// The files pinned now (resolved paths; tests).
    var pinnedPaths: Set<String> { pins.withLock { Set($0.keys) } }

    /// Waits for the pins' queue (tests, and `close`).
    func waitUntilIdle() { queue.sync {} }

    /// Closes every pin (the database closes).
    func close() {
        closed.store(true, ordering: .relaxed)
        queue.sync {
            let closing = pins.withLock { pins in
                let all = Array(pins.values)
                pins = [:]
                return all
            }
            for holder in closing { holder.release() }
        }
    }

    /// Opens the pins the engine's files need and closes the others (on the queue).
    private func reconcile() {
        guard !closed.load(ordering: .relaxed) else { return }
        let wanted = engine.pinnableSourceFiles.files
        let wantedPaths = Set(wanted.map(\.path))
        let stale = pins.withLock { pins in
            let stale = pins.filter { !wantedPaths.contains($0.key) }
            for path in stale.keys { pins[path] = nil }
            return Array(stale.values)
        }
        for holder in stale { holder.release() }
        for file in wanted where pins.withLock({ $0[file.path] == nil }) {
            // A file that cannot be opened or is not in WAL mode is read without a pin.
            guard let holder = PinHolder(path: file.path, cipher: file.cipher) else { continue }
            pins.withLock { $0[file.path] = holder }
        }
    }
}

/// One pin: a connection to a source file in a read transaction. Used on the pins' queue only.
private final class PinHolder: @unchecked Sendable {
    private let connection: Connection

    /// Opens `path` and begins a read transaction on it; nil when the file cannot be opened or
    /// read, or is not in WAL mode.
    init?(path: String, cipher: Cipher?) {
        let configuration = Connection.Configuration(readOnly: true, createIfMissing: false, cipher: cipher, journalMode: .keep, synchronous: nil)
        guard let connection = try? Connection(path: path, configuration: configuration) else { return nil }
        do {
            guard try connection.scalar("PRAGMA journal_mode", as: String.self)?.lowercased() == "wal" else {
                connection.close()
                return nil
            }
            try connection.execute("BEGIN")
            _ = try connection.fetchAll("SELECT count(*) FROM sqlite_master")
        } catch {
            connection.close()
            return nil
        }
        self.connection = connection
    }

    /// Ends the transaction and closes the connection.
    func release() {
        try? connection.execute("ROLLBACK")
        connection.close()
    }
}
