import Dispatch
import Synchronization

/// A database shared between threads and tasks: one serialized writer and a bounded set of readers.
///
/// In WAL mode readers run concurrently with the writer and with each other, each in its own
/// snapshot (a deferred transaction). Every method has a blocking form and an `async` form; the
/// `async` forms run on the pool's own threads (never blocking the cooperative pool) and map task
/// cancellation to `sqlite3_interrupt`, then throw `SQLiteError.cancelled`.
///
/// ```swift
/// let pool = try DatabasePool(path: "app.db")
/// try await pool.write { db in try db.execute("INSERT INTO t(x) VALUES (1)") }
/// let n = try await pool.read { db in try db.scalar("SELECT count(*) FROM t", as: Int.self) }
/// ```
package final class DatabasePool: Sendable {
    /// The database path.
    package let path: String
    /// The configuration every connection of the pool opens with.
    package let configuration: Connection.Configuration
    /// The largest number of reader connections open at once.
    package let maximumReaderCount: Int

    private let writer: ConnectionBox
    private let writerQueue: DispatchQueue
    /// Writes queued behind the one that runs on the writer.
    private let queuedWrites = Atomic<Int>(0)
    private let writerKey = DispatchSpecificKey<Bool>()
    private let readers: LockedValue<[ConnectionBox]>
    private let readerSlots: DispatchSemaphore
    private let state = LockedValue(State())
    /// True when reads run on the writer, in a deferred transaction, one at a time with the
    /// writes (`readsOnWriter`, or a database private to the writer); no reader ever opens.
    package let readsUseWriter: Bool
    private let prepareForUse: (@Sendable (Connection) throws -> Void)?

    private struct State {
        var closed = false
        var readerCount = 0
    }

    /// Opens the database and its writer connection. Readers open on demand.
    /// - Parameters:
    ///   - path: the database file (`:memory:` or an empty path: a database private to the writer,
    ///     which then serves the reads too).
    ///   - configuration: the configuration of every connection.
    ///   - maximumReaderCount: the largest number of reader connections (at least 1).
    ///   - readsOnWriter: run reads on the writer, one at a time with the writes, and open no
    ///     reader (`readsUseWriter`).
    ///   - prepareForUse: called with a connection before each read or write hands it to the
    ///     caller, outside of any transaction (e.g. to attach databases a layer above needs).
    /// - Throws: what `Connection.init` throws.
    package init(path: String, configuration: Connection.Configuration = .init(), maximumReaderCount: Int = 4,
                readsOnWriter: Bool = false, prepareForUse: (@Sendable (Connection) throws -> Void)? = nil) throws(SQLiteError) {
        self.prepareForUse = prepareForUse
        self.path = path
        self.configuration = configuration
        self.maximumReaderCount = max(1, maximumReaderCount)
        self.writer = ConnectionBox(try Connection(path: path, configuration: configuration))
        self.writerQueue = DispatchQueue(label: "ferry.pool.writer")
        self.readers = LockedValue([])
        self.readerSlots = DispatchSemaphore(value: self.maximumReaderCount)
        // An in-memory database is private to its connection: the writer serves reads too.
        self.readsUseWriter = readsOnWriter || path == ":memory:" || path.isEmpty || path.hasPrefix("file::memory:")
        writerQueue.setSpecific(key: writerKey, value: true)
    }

    deinit { close() }

    /// Closes every connection. Later calls throw `SQLiteError.connectionClosed`. Running operations
    /// finish first (the writer's queue drains before its connection closes).
    package func close() {
        let alreadyClosed = state.withLock { s -> Bool in
            defer { s.closed = true }
            return s.closed
        }
        guard !alreadyClosed else { return }
        let idle = readers.withLock { list -> [ConnectionBox] in
            defer { list.removeAll() }
            return list
        }
        for box in idle { box.connection.close() }
        if DispatchQueue.getSpecific(key: writerKey) == true {
            writer.connection.close()
        } else {
            writerQueue.sync { writer.connection.close() }
        }
    }

    /// True until `close()`.
    package var isOpen: Bool { !state.withLock { $0.closed } }

    // MARK: Writes

    /// The number of writes (blocking or async) waiting for the writer while another one runs on
    /// it. Work that holds the writer for long (a migration step) reads it to hand the writer over
    /// as soon as someone waits.
    package var writesWaiting: Int { queuedWrites.load(ordering: .relaxed) }

    /// Runs `body` on the writer inside an IMMEDIATE transaction (a savepoint if `body` nests).
    /// Commits when it returns, rolls back when it throws.
    /// - Throws: `SQLiteError.misuse` when called from inside another write of this pool.
    package func write<T>(_ body: (Connection) throws -> T) throws -> T {
        try writeWithoutTransaction { db in try db.transaction(.immediate) { try body(db) } }
    }

    /// Runs `body` on the writer with no implicit transaction.
    package func writeWithoutTransaction<T>(_ body: (Connection) throws -> T) throws -> T {
        guard DispatchQueue.getSpecific(key: writerKey) != true else {
            throw SQLiteError.misuse("reentrant write: this code already runs inside a write of the same pool; use the Connection it was given")
        }
        queuedWrites.add(1, ordering: .relaxed)
        return try writerQueue.sync {
            queuedWrites.subtract(1, ordering: .relaxed)
            try checkOpen()
            try prepareForUse?(writer.connection)
            return try body(writer.connection)
        }
    }

    /// Async form of `write(_:)`: cancellation interrupts the statement and rolls the transaction back.
    package func write<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await writeWithoutTransaction { db in try db.transaction(.immediate) { try body(db) } }
    }

    /// Async form of `writeWithoutTransaction(_:)`.
    package func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        let writer = self.writer
        queuedWrites.add(1, ordering: .relaxed)
        return try await runCancellable(on: writerQueue, dequeued: { [self] in queuedWrites.subtract(1, ordering: .relaxed) }, cancel: {
            writer.connection.interrupter.requestCancel()
            writer.connection.interrupter.interrupt()
        }, endCancel: {
            writer.connection.interrupter.clearCancel()
        }) { [self] in
            try checkOpen()
            try prepareForUse?(writer.connection)
            return try body(writer.connection)
        }
    }

    // MARK: Typed bodies

    /// `write(_:)` for a body that throws only `E`: the pool's own failures arrive as `E` too.
    package func write<T, E: SQLiteErrorConvertible>(_ body: (Connection) throws(E) -> T) throws(E) -> T {
        try E.converting { try write { db throws -> T in try body(db) } }
    }

    /// `writeWithoutTransaction(_:)` for a body that throws only `E`.
    package func writeWithoutTransaction<T, E: SQLiteErrorConvertible>(_ body: (Connection) throws(E) -> T) throws(E) -> T {
        try E.converting { try writeWithoutTransaction { db throws -> T in try body(db) } }
    }

    /// Async `writeWithoutTransaction(_:)` for a body that throws only `E`.
    package func writeWithoutTransaction<T: Sendable, E: SQLiteErrorConvertible>(
        _ body: @escaping @Sendable (Connection) throws(E) -> T
    ) async throws(E) -> T {
        try await E.converting { try await writeWithoutTransaction { db throws -> T in try body(db) } }
    }

    /// `read(_:)` for a body that throws only `E`: the pool's own failures arrive as `E` too.
    package func read<T, E: SQLiteErrorConvertible>(_ body: (Connection) throws(E) -> T) throws(E) -> T {
        try E.converting { try read { db throws -> T in try body(db) } }
    }

    /// Async `read(_:)` for a body that throws only `E`.
    package func read<T: Sendable, E: SQLiteErrorConvertible>(_ body: @escaping @Sendable (Connection) throws(E) -> T) async throws(E) -> T {
        try await E.converting { try await read { db throws -> T in try body(db) } }
    }

    // MARK: Reads

    /// Runs `body` on a reader connection inside a deferred transaction: it sees one consistent
    /// snapshot, unaffected by concurrent writes. Waits while every reader is busy.
    package func read<T>(_ body: (Connection) throws -> T) throws -> T {
        if readsUseWriter {
            guard DispatchQueue.getSpecific(key: writerKey) != true else {
                throw SQLiteError.misuse("a read inside a write of the same pool, whose reads run on the writer: read with the Connection the write was given")
            }
            return try writeWithoutTransaction { db in try db.transaction(.deferred) { try body(db) } }
        }
        let box = try acquireReader()
        defer { releaseReader(box) }
        try prepareForUse?(box.connection)
        return try box.connection.transaction(.deferred) { try body(box.connection) }
    }

    /// Async form of `read(_:)`: cancellation interrupts the statement.
    package func read<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        if readsUseWriter {
            return try await writeWithoutTransaction { db in try db.transaction(.deferred) { try body(db) } }
        }
        // The reader in use, and whether the task was cancelled. Both change under one lock, so a
        // cancellation either reaches the reader or is seen before the reader runs anything, and no
        // cancel request outlives the read on a connection going back to the pool.
        let slot = Mutex(ReaderSlot())
        // A serial queue of its own, not `.global()`: a read may block (a long query, or waiting for
        // a free reader), and on Linux the global queues are the threads Swift concurrency runs on,
        // so blocked reads would starve every task, including the one that would cancel them.
        // A new serial queue gets a thread even when the global ones are all busy.
        let queue = DispatchQueue(label: "ferry.pool.reader")
        return try await runCancellable(on: queue, cancel: {
            slot.withLock { slot in
                slot.cancelled = true
                if let interrupter = slot.box?.connection.interrupter {
                    interrupter.requestCancel()
                    interrupter.interrupt()
                }
            }
        }, endCancel: {}) { [self] in
            let box = try acquireReader()
            let cancelledWhileWaiting = slot.withLock { slot -> Bool in
                if !slot.cancelled { slot.box = box }
                return slot.cancelled
            }
            if cancelledWhileWaiting {
                releaseReader(box)
                throw SQLiteError.cancelled
            }
            defer {
                slot.withLock { $0.box = nil }
                box.connection.interrupter.clearCancel()
                releaseReader(box)
            }
            try prepareForUse?(box.connection)
            return try box.connection.transaction(.deferred) { try body(box.connection) }
        }
    }

    /// Interrupts the writer's running statement (readers are interrupted through task cancellation).
    package func interruptWriter() { writer.connection.interrupter.interrupt() }

    // MARK: Internals

    private func checkOpen() throws(SQLiteError) {
        if state.withLock({ $0.closed }) { throw .connectionClosed }
    }

    private func acquireReader() throws(SQLiteError) -> ConnectionBox {
        try checkOpen()
        readerSlots.wait()
        if let box = readers.withLock({ $0.popLast() }) { return box }
        do {
            var readerConfiguration = configuration
            readerConfiguration.journalMode = .keep
            readerConfiguration.readOnly = true
            return ConnectionBox(try Connection(path: path, configuration: readerConfiguration))
        } catch {
            readerSlots.signal()
            throw error
        }
    }

    private func releaseReader(_ box: ConnectionBox) {
        if box.connection.isInTransaction { try? box.connection.execute("ROLLBACK") }
        if state.withLock({ $0.closed }) {
            box.connection.close()
        } else {
            readers.withLock { $0.append(box) }
        }
        readerSlots.signal()
    }

    /// Runs blocking database work on `queue`, bridging to async, and maps task cancellation to a
    /// cancel request on the connection the work uses (its next statement step throws
    /// `SQLiteError.cancelled`, and the running one is interrupted).
    ///
    /// Invariant: `cancel` is only called while this work runs (phase `.running`, checked under the
    /// lock), so a cancellation never reaches work queued by someone else; `endCancel` is called
    /// after the work returned, when `cancel` was called, to withdraw the request.
    /// `dequeued` runs first on `queue`, whether the work then starts or was cancelled meanwhile.
    private func runCancellable<T: Sendable>(on queue: DispatchQueue, dequeued: (@Sendable () -> Void)? = nil,
                                             cancel: @escaping @Sendable () -> Void,
                                             endCancel: @escaping @Sendable () -> Void,
                                             _ work: @escaping @Sendable () throws -> T) async throws -> T {
        let phase = Mutex(WorkPhase.pending)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                queue.async {
                    dequeued?()
                    let startNow = phase.withLock { p -> Bool in
                        guard p == .pending else { return false }  // cancelled before it started
                        p = .running
                        return true
                    }
                    guard startNow else {
                        continuation.resume(throwing: SQLiteError.cancelled)
                        return
                    }
                    let result = Result { try work() }
                    let wasCancelled = phase.withLock { p -> Bool in
                        defer { p = .done }
                        if p == .cancelledWhileRunning { endCancel() }
                        return p == .cancelledWhileRunning
                    }
                    switch result {
                    case .success(let value):
                        continuation.resume(returning: value)
                    // A typed body (`throws(E)`) throws its own error type: recognized through the protocol.
                    case .failure(let error as any SQLiteErrorConvertible) where wasCancelled && error.isInterruption:
                        continuation.resume(throwing: SQLiteError.cancelled)
                    case .failure(let error):
                        continuation.resume(throwing: error)
                    }
                }
            }
        } onCancel: {
            phase.withLock { p in
                switch p {
                case .pending:
                    p = .cancelledBeforeStart
                case .running:
                    p = .cancelledWhileRunning
                    cancel()
                default:
                    break
                }
            }
        }
    }
}

/// The reader connection an async read uses, and whether its task was cancelled.
private struct ReaderSlot {
    var box: ConnectionBox?
    var cancelled = false
}

private enum WorkPhase: Sendable {
    case pending, running, cancelledBeforeStart, cancelledWhileRunning, done
}

/// A connection handed between threads by the pool, which guarantees that one thread at a time
/// uses it (the writer's serial queue, or a reader checked out of the pool).
final class ConnectionBox: @unchecked Sendable {
    let connection: Connection
    init(_ connection: Connection) { self.connection = connection }
}
