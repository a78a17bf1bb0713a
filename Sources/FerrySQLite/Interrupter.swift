#if SQLCipher
internal import CSQLCipher
#else
internal import CSQLite
#endif
import Synchronization

/// A thread-safe handle that interrupts whatever its connection is running.
///
/// `Connection` is used by one thread at a time; its interrupter may be called from any thread or
/// task, before, during or after a statement, and after the connection closed (then it does nothing).
package final class Interrupter: Sendable {
    /// The connection handle; only `sqlite3_interrupt` is called on it from other threads, which
    /// SQLite allows, and only while the connection is open (the mutex orders it before close).
    private struct Handle: @unchecked Sendable { let db: OpaquePointer }
    private let handle: Mutex<Handle?>

    private let cancelRequested = Atomic<Bool>(false)
    private let closed = Atomic<Bool>(false)

    init(_ db: OpaquePointer) { handle = Mutex(Handle(db: db)) }

    /// Asks the connection to stop: every statement step throws `SQLiteError.cancelled` until
    /// `clearCancel()`. Used for task cancellation, which may arrive between two statements, where
    /// `sqlite3_interrupt` alone would be lost.
    func requestCancel() { cancelRequested.store(true, ordering: .releasing) }

    /// Ends a cancel request.
    func clearCancel() { cancelRequested.store(false, ordering: .releasing) }

    /// True while a cancel request is pending.
    var isCancelRequested: Bool { cancelRequested.load(ordering: .relaxed) }

    /// Makes the running statement of the connection fail with `SQLITE_INTERRUPT` as soon as possible.
    package func interrupt() {
        handle.withLock { db in
            if let db { sqlite3_interrupt(db.db) }
        }
    }

    /// Called by the connection before it closes, so no interrupt can reach a closed handle.
    func invalidate() {
        handle.withLock { $0 = nil }
        closed.store(true, ordering: .releasing)
    }

    /// True once the connection closed: its statements then refuse to run.
    var isConnectionClosed: Bool { closed.load(ordering: .acquiring) }
}
