import Foundation

/// A value guarded by a pthread mutex (`NSLock`).
///
/// `Synchronization.Mutex` is the default elsewhere. On Linux it takes a contended lock in the kernel
/// (`FUTEX_LOCK_PI`), which Thread Sanitizer cannot see, so TSan reports the accesses it orders as
/// races. The connection pool's reader list is contended on every concurrent read: it uses this
/// lock, which TSan understands, so sanitizer runs stay free of false reports.
final class LockedValue<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value.
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
