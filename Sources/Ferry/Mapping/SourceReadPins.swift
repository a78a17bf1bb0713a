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
/// pending key 9.3-9.4 µs unpinned, 7.7-8.0 µs pinned (5.6-5.8 µs on the finished table).
///
/// A pin keeps the file's WAL from being checkpointed past its snapshot and from restarting,
/// and a file with a rollback journal from being written at all. So only files in WAL mode are
/// pinned, and only while a table they feed migrates (`MigrationEngine.pinnableSourceFiles`):
/// Ferry writes a source only to clean it up, once no table migrates. The pins follow the
/// engine's epoch, which `refresh` compares at every use of a connection: it releases the pins
/// no longer wanted at once, on the caller's thread, before that use can begin a cleanup; it
/// opens new ones on a queue of their own, since opening an encrypted file derives its key.
final class SourceReadPins: Sendable {
    private let queue = DispatchQueue(label: "ferry.source-pins", qos: .utility)
    /// The engine epoch the pins follow (-1: none yet).
    private let seenEpoch = Atomic<Int>(-1)
    private let closed = Atomic<Bool>(false)
    /// The pins by resolved path. A holder is used by whoever takes it out of this dictionary.
    private let pins = Mutex<[String: PinHolder]>([:])
    private let engine: MigrationEngine

    init(engine: MigrationEngine) {
        self.engine = engine
    }

    /// Brings the pins in line with the engine when its epoch moved (one comparison otherwise).
    func refresh() {
        guard !closed.load(ordering: .relaxed) else { return }
        let epoch = engine.epoch
        // A load first: every use of every connection comes here, and only an epoch change writes.
        guard seenEpoch.load(ordering: .relaxed) != epoch, seenEpoch.exchange(epoch, ordering: .relaxed) != epoch else { return }
        let wanted = engine.attacher.pinnableSourceFiles
        let wantedPaths = Set(wanted.map(\.path))
        let (stale, missing) = pins.withLock { pins in
            let stale = pins.filter { !wantedPaths.contains($0.key) }
            for path in stale.keys { pins[path] = nil }
            return (Array(stale.values), wanted.contains { pins[$0.path] == nil })
        }
        for holder in stale { holder.release() }
        if missing { queue.async { [self] in open(wanted, forEpoch: epoch) } }
    }

    /// The files pinned now (resolved paths; tests).
    var pinnedPaths: Set<String> { pins.withLock { Set($0.keys) } }

    /// Waits until the pins being opened are open (tests).
    func waitUntilIdle() { queue.sync {} }

    /// Closes every pin (the database closes).
    func close() {
        closed.store(true, ordering: .relaxed)
        queue.sync {}
        let closing = pins.withLock { pins in
            let all = Array(pins.values)
            pins = [:]
            return all
        }
        for holder in closing { holder.release() }
    }

    /// Opens the pins of `files` that are missing (on the queue). A pin opened after the epoch
    /// moved on, or after `close`, is released at once: `refresh` decided without it.
    private func open(_ files: [(path: String, cipher: Cipher?)], forEpoch epoch: Int) {
        for file in files where pins.withLock({ $0[file.path] == nil }) {
            // A file that cannot be opened or is not in WAL mode is read without a pin.
            guard let holder = PinHolder(path: file.path, cipher: file.cipher) else { continue }
            let kept = pins.withLock { pins in
                guard !closed.load(ordering: .relaxed), seenEpoch.load(ordering: .relaxed) == epoch, pins[file.path] == nil else { return false }
                pins[file.path] = holder
                return true
            }
            if !kept { holder.release() }
        }
    }
}

/// One pin: a connection to a source file in a read transaction. Used by one thread at a time.
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
