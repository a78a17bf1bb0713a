import Foundation

/// The engine's current `CatalogSnapshot`, behind one lock: written on the writer (a load, a
/// committed step), read by every connection.
final class PublishedCatalog: @unchecked Sendable {
    private let lock = NSLock()
    private var snapshot = CatalogSnapshot()

    /// The snapshot now.
    var current: CatalogSnapshot {
        lock.lock()
        defer { lock.unlock() }
        return snapshot
    }

    /// What `body` reads of the snapshot now (without copying the whole of it).
    func read<T>(_ body: (CatalogSnapshot) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(snapshot)
    }

    /// Replaces the snapshot by what `change` makes of it, in one step.
    func publish(_ change: (CatalogSnapshot) -> CatalogSnapshot) {
        lock.lock()
        defer { lock.unlock() }
        snapshot = change(snapshot)
    }
}
